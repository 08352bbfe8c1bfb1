/** Polish messages of the export screens, merged into ../pl.ts. */
import type { exportEn } from './en.ts';

export const exportPl: Record<keyof typeof exportEn, string> = {
  'export.button': 'Eksportuj',
  'export.title': 'Eksport danych',
  'export.format': 'Typ pliku',
  'export.format.csv': 'Arkusz CSV',
  'export.format.pdf': 'Raport PDF',
  'export.params': 'Parametry',
  'export.params.all': 'Wszystkie parametry',
  'export.params.selected': 'Wybrane parametry',
  'export.params.pick': 'Wybierz parametry',
  'export.from': 'Od',
  'export.to': 'Do',
  'export.fileName': 'Nazwa pliku (opcjonalnie)',
  'export.fileName.hint': 'Bez rozszerzenia; gdy puste, użyta zostanie nazwa urządzenia i daty.',
  'export.submit': 'Eksportuj',
  'export.status.queued': 'Oczekuje w kolejce…',
  'export.status.running': 'Eksportowanie… {percent}%',
  'export.status.done': 'Plik jest gotowy.',
  'export.progress': 'Postęp eksportu',
  'export.download': 'Pobierz',
  'export.again': 'Nowy eksport',
  'export.devices':
    '{count, plural, one {# urządzenie} few {# urządzenia w jednym pliku zip} many {# urządzeń w jednym pliku zip} other {# urządzenia w jednym pliku zip}}',
  'export.quality.title': 'Jakość napięcia',
  'export.quality.hint':
    'Udział 10-minutowych średnich napięcia w każdym paśmie. EN 50160 wymaga 95 % w zakresie 230 V ± 10 %.',
  'export.quality.phase': 'Faza',
  'export.quality.warning': 'Pasmo ostrzegawcze (±{percent} %)',
  'export.quality.critical': 'Pasmo krytyczne (±{percent} %)',
  'export.quality.en50160': 'EN 50160 (±10 %)',
  'export.quality.band': 'od {low} V do {high} V',
  'export.quality.samples': 'Średnie 10-minutowe',
  'export.quality.met': 'Spełnione',
  'export.quality.notMet': 'Niespełnione',
  'export.quality.noData': 'Brak odczytów napięcia w tym okresie.',
  'export.quality.tooLong':
    'Jakość napięcia obejmuje najwyżej {days} dni. Wybierz krótszy zakres, aby ją zobaczyć.',
};
