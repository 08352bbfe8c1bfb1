/** Polish server messages, merged into ../pl.ts. */
import type { serverEn } from './en.ts';

export const serverPl: Record<keyof typeof serverEn, string> = {
  'server.exportSpaceUser':
    'Twoje pliki eksportu zajmują całe dozwolone miejsce. Usuń starsze eksporty albo poczekaj, aż wygasną.',
  'server.exportSpaceServer':
    'Eksport niedostępny: na serwerze nie ma miejsca na kolejne pliki eksportu. Spróbuj ponownie później.',
  'server.exportRunning': 'Eksport trwa; można go usunąć, gdy się zakończy.',
  'server.exportTooLarge':
    'Eksport przekroczył miejsce dozwolone dla plików eksportu. Wybierz mniej urządzeń lub parametrów albo krótszy zakres.',
  'server.passwordLength': 'Hasło musi mieć od 8 do 128 znaków.',
  'server.invalidToken': 'Link jest nieprawidłowy lub wygasł.',
  'server.emailTaken': 'Konto z tym adresem e-mail już istnieje.',
  'server.unauthorized': 'Twoja sesja wygasła. Zaloguj się ponownie.',
  'server.alreadyClaimed': 'Ten licznik jest już zarejestrowany.',
  'server.stockTopicTaken':
    'Licznik innego konta używa już fabrycznego tematu MQTT tego licznika (tasmota_ i ostatnie 6 cyfr szesnastkowych MAC). Ustaw w urządzeniu Topic i MqttClient (Tasmota) lub prefiks MQTT na jego klucz urządzenia, czyli MAC jako 12 małych cyfr szesnastkowych, i dodaj je ponownie ze stockTopics: false.',
  'server.invalidMac': 'Wpisz prawidłowy adres MAC.',
  'server.priceStart':
    'Cena zaczyna się o pełnym kwadransie (czas ISO 8601 ze strefą, np. 2026-06-10T13:15:00+02:00).',
  'server.priceRange': 'Wpisz cenę od -100 do 100 za kWh.',
  'server.pricesRequired': 'Wyślij co najmniej jedną cenę.',
  'server.tooManyPrices': 'Za dużo cen w jednym żądaniu: najwyżej 70176 (dwa lata kwadransów).',
  'server.priceRow': 'Wiersz zawiera początek i cenę, rozdzielone przecinkiem.',
  'server.priceDuplicate': 'Ten początek występuje dwukrotnie.',
  'server.pricesFull':
    'Ta lokalizacja ma już tyle cen, ile może (dziesięć lat kwadransów). Najpierw usuń starsze.',
  'server.invalidTimestamp': 'Wpisz prawidłowy czas.',
  'server.tooManyRequests': 'Zbyt wiele prób. Spróbuj ponownie później.',
  'server.tooLarge': 'Żądanie jest zbyt duże.',
  'server.malformed': 'Nie udało się odczytać żądania.',
  'server.busy': 'Serwer jest zajęty. Spróbuj ponownie później.',
  'server.demoFull': 'Demo jest teraz pełne. Spróbuj ponownie później.',
  'server.sharedMeter': 'Ten symulowany licznik należy do demo: jego konta nie można zmienić.',
  'server.invalidScheme': 'Wybierz rozliczenie: brak, net-metering lub net-billing.',
  'server.installedPowerRequired': 'Net-metering wymaga mocy zainstalowanej w kW (powyżej 0, najwyżej 50).',
  'server.settlementSinceRequired': 'Wpisz dzień, od którego obowiązuje rozliczenie.',
  'server.noSettlement':
    'Ta lokalizacja nie ma rozliczenia prosumenckiego. Najpierw wybierz w lokalizacji net-metering lub net-billing.',
  'server.settlementNeedsGrid':
    'Rozliczenie liczone jest z licznika przyłącza lokalizacji: nadaj jednemu z jej urządzeń rolę przyłącza sieci.',
  'server.importRunning': 'Import dla tego konta już trwa. Poczekaj, aż się zakończy, i spróbuj ponownie.',
  'server.importDemoRunning': 'W jednym z obszarów demo trwa już import. Spróbuj ponownie za chwilę.',
  'server.importSharedMeter': 'Ten symulowany licznik należy do demo: jego historii nie można zmienić.',
  'server.importOnConflict': 'onConflict to keep (domyślnie) lub replace.',
  'server.importStillRunning': 'Import wciąż trwa; można go cofnąć, gdy się zakończy.',
  'server.importAlreadyUndone': 'Ten import został już cofnięty.',
  'server.importNothingToUndo': 'Ten import nie dodał ani nie zastąpił żadnych odczytów: nie ma czego cofać.',
  'server.importStopped': 'Serwer zatrzymał się w trakcie importu. Zapisane dotąd odczyty można cofnąć.',
  'server.importNoBody': 'Wyślij plik jako treść żądania (Content-Type text/csv lub text/plain).',
  'server.importTooManyRuns':
    'Czasy odczytów z importu są zbyt nieregularne, by zapisać je do cofnięcia (ponad 20000 serii równych odstępów): importu nie można cofnąć.',
  'server.importTooManyReplaced':
    'Import zastąpił ponad 50000 zapisanych odczytów, więcej, niż jest przechowywane do cofnięcia: importu nie można cofnąć.',
  'server.importTooLarge': 'Plik przekracza limit importu 256 MiB (KW_IMPORT_MAX_BYTES).',
  'server.importCsvMapping': 'Import csv wymaga mapowania (JSON) w parametrze zapytania mapping.',
  'server.importLineProtocolMapping':
    'Import line-protocol wymaga mapowania (JSON) w parametrze zapytania mapping.',
  'server.importMappingObject': 'Mapowanie musi być obiektem JSON.',
  'server.importStoreFailed': 'Import przerwany: zawiodła baza telemetrii lub baza metadanych.',
  'server.importRollupsFailed': 'Nie udało się przeliczyć agregatów.',
};
