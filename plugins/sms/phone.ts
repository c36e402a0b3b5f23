import { fieldError } from '../../core/kit/area.js';

// libphonenumber-js's metadata is loaded on the first number checked, not at boot.
let lib: Promise<typeof import('libphonenumber-js/max')> | undefined;

/**
 * `to` as E.164 (`+` then up to 15 digits, written so already) that libphonenumber-js finds
 * valid for its country's numbering plan, else 400 validation_failed naming the field.
 */
export async function e164(value: string, param = 'to'): Promise<string> {
  if (!/^\+[1-9][0-9]{6,14}$/.test(value))
    throw fieldError(param, 'must be an E.164 number: + then the country code and number, digits only');
  const { parsePhoneNumberFromString } = await (lib ??= import('libphonenumber-js/max'));
  const parsed = parsePhoneNumberFromString(value);
  if (!parsed?.isValid() || parsed.number !== value)
    throw fieldError(param, 'is not a valid phone number in its country');
  return parsed.number;
}
