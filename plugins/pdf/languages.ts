import { fieldError } from '../../core/kit/area.js';

// ISO 639-1 to the ISO 639-2/T codes tesseract's language data is named by (the languages
// with traineddata in tesseract's own set that callers ask for most).
const TESSERACT: Record<string, string> = {
  en: 'eng',
  de: 'deu',
  fr: 'fra',
  es: 'spa',
  it: 'ita',
  pt: 'por',
  nl: 'nld',
  pl: 'pol',
  ru: 'rus',
  uk: 'ukr',
  cs: 'ces',
  sk: 'slk',
  sv: 'swe',
  da: 'dan',
  no: 'nor',
  nb: 'nor',
  fi: 'fin',
  hu: 'hun',
  ro: 'ron',
  el: 'ell',
  tr: 'tur',
  he: 'heb',
  ar: 'ara',
  hi: 'hin',
  ja: 'jpn',
  ko: 'kor',
  zh: 'chi_sim',
  vi: 'vie',
  th: 'tha',
  id: 'ind',
  ca: 'cat',
  hr: 'hrv',
  bg: 'bul',
  sl: 'slv',
  lt: 'lit',
  lv: 'lav',
  et: 'est',
  fa: 'fas',
};
const TESSERACT_CODE = /^[a-z]{3}(_[a-z]{3,4})?$/;

/**
 * The `language` hint as tesseract codes, best first: `en`, `eng`, `zh-Hans`… or several
 * joined by `+` (tesseract's own syntax, `eng+deu`). English when there is no hint.
 */
export function ocrLanguages(hint: string | undefined): string[] {
  if (hint === undefined) return ['eng'];
  const out: string[] = [];
  for (const part of hint.split('+')) {
    const code = part.trim().toLowerCase();
    const base = code.split(/[-_]/)[0];
    const mapped = code === 'zh-hant' || code === 'zh-tw' ? 'chi_tra' : TESSERACT[base];
    if (base.length === 2 && mapped) out.push(mapped);
    else if (TESSERACT_CODE.test(code)) out.push(code);
    else {
      const message = `is not a language code this gateway knows (an ISO 639-1 code like "en" or a tesseract code like "eng")`;
      throw fieldError('language', message, `language "${part}" ${message}.`);
    }
  }
  return [...new Set(out)];
}
