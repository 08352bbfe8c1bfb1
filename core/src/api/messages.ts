/**
 * User-facing messages: the validation keys of docs/spec.md §5 and the error catalogue of docs/spec.md §8. The
 * client translates them by key, so the server sends exactly these strings.
 */
export const MESSAGES = {
  // docs/spec.md §5
  validNumber: 'Must be a valid number.',
  dateRangeRequired: 'Date range is required.',
  selectParameter: 'Please select at least one parameter.',
  selectFileType: 'Select file type to export.',
  fieldEmpty: 'Field cannot be empty.',
  warningBelowCritical: 'Warning level must be less than the critical level.',
  warningRange: 'Warning level must be in the range 0-50%.',
  criticalAboveWarning: 'Critical level must be greater than the warning level.',
  criticalRange: 'Critical level must be in the range 0-100%.',
  comparisonName: 'The comparison name must be between 3 and 30 characters.',
  compareParameter: 'Select at least one parameter to compare.',
  countryRequired: 'Country is required.',
  timezoneRequired: 'Timezone is required.',
  // docs/spec.md §8
  loginFailed: 'Try again!',
  loginSucceeded: 'You have successfully logged in!',
  internal: 'Internal server error. Please contact with server administrator.',
  notFound: 'Seems there is nothing here',
  saveFailed: 'Unable to save data. Check form.',
  saved: 'Data has been successfully saved.',
  exportFailed: 'Exporting data failed.',
  exportUnavailable: 'Export unavailable',
  exportSpaceUser:
    'Your export files use all the space allowed. Delete older exports or wait until they expire.',
  exportSpaceServer: 'Export unavailable: the server has no room for more export files. Try again later.',
  exportRunning: 'The export is running; it can be deleted once it has finished.',
  exportTooLarge:
    'The export grew past the space allowed for export files. Choose fewer devices or parameters, or a shorter range.',
  exportScheduled: 'Exporting data scheduled. We will inform you when file be ready.',
  meterValueFailed: 'Failed to save energy meter data',
  limitsFailed: 'Failed to save limit values',
  deleteFailed: 'Error deleting device',
  deleted: 'Device successfully deleted',
  weakSignal: 'Network connection problem',
  rangeTooLong: 'Data range is too long.',
  // Beyond the original catalogue: account and transport errors the original product never showed.
  invalidEmail: 'Enter a valid email address.',
  passwordLength: 'Password must be 8 to 128 characters.',
  commonPassword: 'This password is too common. Choose one that is harder to guess.',
  invalidToken: 'The link is invalid or has expired.',
  emailTaken: 'An account with this email already exists.',
  unauthorized: 'Your session has ended. Please sign in again.',
  alreadyClaimed: 'This meter is already registered.',
  stockTopicTaken:
    "Another account's meter already uses this meter's stock MQTT topic (tasmota_ and the MAC's last 6 hex digits). Set the device's Topic and MqttClient (Tasmota) or MQTT prefix to its device key, the MAC as 12 lowercase hex digits, and add it again with stockTopics: false.",
  invalidMac: 'Enter a valid MAC address.',
  invalidRole: 'Choose a role: grid, production, storage or consumer.',
  gridTaken: 'This location already has a grid meter. Give that one another role first.',
  priceStart:
    'A price starts on a quarter hour (an ISO 8601 time with its zone, e.g. 2026-06-10T13:15:00+02:00).',
  priceRange: 'Enter a price between -100 and 100 per kWh.',
  pricesRequired: 'Send at least one price.',
  tooManyPrices: 'Too many prices in one request: at most 70176 (two years of quarter hours).',
  priceRow: 'A row holds a start and a price, separated by a comma.',
  priceDuplicate: 'This start is named twice.',
  pricesFull:
    'This location holds as many prices as it may (ten years of quarter hours). Delete older ones first.',
  invalidDate: 'Enter a valid date.',
  invalidTimestamp: 'Enter a valid time.',
  tooManyRequests: 'Too many attempts. Try again later.',
  tooLarge: 'The request is too large.',
  malformed: 'The request could not be read.',
  busy: 'The server is busy. Try again later.',
  demoFull: 'The demo is full right now. Try again later.',
  sharedMeter: 'This simulated meter belongs to the demo: its account cannot be changed.',
  invalidScheme: 'Choose a settlement: none, net-metering or net-billing.',
  installedPowerRequired: 'Net-metering needs the installed power in kW (above 0, at most 50).',
  settlementSinceRequired: 'Enter the day the settlement began.',
  noSettlement:
    'This location has no prosumer settlement. Choose net-metering or net-billing on the location first.',
  settlementNeedsGrid:
    "The settlement is drawn from the location's grid meter: give one of its devices the grid role.",
  // History imports (docs/api.md §History import). The numbers are the server's bounds
  // (api/src/imports/: MAX_RUNS, MAX_REPLACED; KW_IMPORT_MAX_BYTES's default), checked by its tests. A
  // server with another size limit names it in importTooLarge's sentence.
  importRunning: 'An import is already running for this account. Wait until it has finished, then try again.',
  importDemoRunning: 'An import is already running in a demo workspace. Try again in a moment.',
  importSharedMeter: 'This simulated meter belongs to the demo: its history cannot be changed.',
  importOnConflict: 'onConflict is keep (the default) or replace.',
  importStillRunning: 'The import is still running; it can be undone once it has finished.',
  importAlreadyUndone: 'This import has already been undone.',
  importNothingToUndo: 'This import added or replaced no readings: there is nothing to undo.',
  importStopped: 'The server stopped while the import ran. Its readings written so far can be undone.',
  importNoBody: 'Send the file as the request body (Content-Type text/csv or text/plain).',
  importTooManyRuns:
    "The import's readings are too irregular to record for undo (more than 20000 runs of evenly spaced times): it cannot be undone.",
  importTooManyReplaced:
    'The import replaced more than 50000 stored readings, more than are kept for undo: it cannot be undone.',
  importTooLarge: 'The file is larger than the import limit of 256 MiB (KW_IMPORT_MAX_BYTES).',
  importCsvMapping: 'A csv import needs a mapping (JSON) in the mapping query parameter.',
  importLineProtocolMapping: 'A line-protocol import needs a mapping (JSON) in the mapping query parameter.',
  importMappingObject: 'The mapping is a JSON object.',
  importStoreFailed: 'The import stopped: the telemetry store or the metadata database failed.',
  importRollupsFailed: 'The rollups could not be refreshed.',
} as const;

export type MessageKey = keyof typeof MESSAGES;
export type Message = (typeof MESSAGES)[MessageKey];
