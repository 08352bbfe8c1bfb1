/**
 * A day typed into a date field, read in the interface language's format (`L`: en 03/10/2026, pl and tr
 * 10.03.2026), its short forms (3/10/2026, 10.3.2026) and ISO (2026-03-10); the day as `YYYY-MM-DD`.
 * Shown back with `formatDay` (lib/time.ts).
 */
import 'dayjs/locale/pl.js';
import 'dayjs/locale/tr.js';
import { dayjs } from '../lib/time.ts';

const SHORT: Record<string, string> = { en: 'M/D/YYYY' };

export function parseTypedDay(text: string, locale: string): string | null {
  const s = text.trim();
  if (!s) return null;
  for (const format of ['L', SHORT[locale] ?? 'D.M.YYYY', 'YYYY-MM-DD']) {
    const d = dayjs(s, format, locale, true);
    if (d.isValid()) return d.format('YYYY-MM-DD');
  }
  return null;
}
