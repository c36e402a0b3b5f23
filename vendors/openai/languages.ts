// Whisper names the language it detected in English words ("english"); the gateway's contract
// speaks ISO-639-1 codes. The codes are Whisper's own list; the names come from ICU, with the
// few spellings where Whisper differs.
const CODES = (
  'en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te fa lv '
  + 'bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo '
  + 'tl mg as tt haw ln ha ba jw su yue'
).split(' ');
const WHISPER_SPELLINGS: Record<string, string> = {
  maori: 'mi',
  bengali: 'bn',
  'haitian creole': 'ht',
  haitian: 'ht',
  tagalog: 'tl',
  nynorsk: 'nn',
  myanmar: 'my',
  burmese: 'my',
  castilian: 'es',
  flemish: 'nl',
  letzeburgesch: 'lb',
  pushto: 'ps',
  panjabi: 'pa',
  moldavian: 'ro',
  moldovan: 'ro',
  sinhalese: 'si',
  valencian: 'ca',
  mandarin: 'zh',
};

let byName: Map<string, string> | undefined;

function names(): Map<string, string> {
  if (byName) return byName;
  const d = new Intl.DisplayNames(['en'], { type: 'language' });
  byName = new Map(CODES.map((c) => [(d.of(c) ?? c).toLowerCase(), c]));
  for (const [n, c] of Object.entries(WHISPER_SPELLINGS)) byName.set(n, c);
  return byName;
}

/** An ISO-639-1 (or Whisper's 3-letter) code for what the vendor said; undefined when unknown. */
export function languageCode(said: string | undefined | null): string | undefined {
  if (!said) return undefined;
  const s = said.trim().toLowerCase();
  if (CODES.includes(s)) return s;
  return names().get(s);
}
