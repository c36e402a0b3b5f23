import { fieldError } from '../../core/kit/area.js';

// ISO 4217 currencies a charge may be in, with their minor-unit exponent: an amount is an integer
// count of 10^-exponent of the currency (JPY 500 is ¥500, USD 500 is $5.00, KWD 500 is 0.500 KD).
// The exponents are ISO's; a vendor that counts otherwise converts in its adapter.

const ZERO = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const THREE = 'BHD IQD JOD KWD LYD OMR TND';
const TWO =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY '
  + 'COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS '
  + 'INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR '
  + 'MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD '
  + 'SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWL';

const EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...ZERO.split(' ').map((c) => [c, 0] as const),
  ...TWO.split(' ').map((c) => [c, 2] as const),
  ...THREE.split(' ').map((c) => [c, 3] as const),
]);

/** The minor-unit exponent of an ISO 4217 code (upper case), or undefined when it is not one. */
export function exponentOf(code: string): number | undefined {
  return EXPONENTS.get(code);
}

/** The code in upper case; 400 naming `currency` when it is not an ISO 4217 currency. */
export function checkCurrency(code: string): string {
  const upper = code.toUpperCase();
  if (!EXPONENTS.has(upper)) throw fieldError('currency', `"${code}" is not an ISO 4217 currency code`);
  return upper;
}

/** `amount` minor units as a decimal string of the currency (`1050 USD` → `10.50`), for pages and messages. */
export function formatAmount(amount: number, currency: string): string {
  const e = exponentOf(currency) ?? 2;
  if (e === 0) return String(amount);
  const s = String(amount).padStart(e + 1, '0');
  return `${s.slice(0, -e)}.${s.slice(-e)}`;
}
