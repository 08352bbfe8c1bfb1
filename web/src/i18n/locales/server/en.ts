import { MESSAGES } from '@kilowatch/core';

/**
 * Server messages the other catalogues do not already hold, merged into the English catalogue (../en.ts). The
 * English text is the catalogue's own, so `translateServerMessage` finds them by what the API sent.
 */
export const serverEn = {
  'server.exportSpaceUser': MESSAGES.exportSpaceUser,
  'server.exportSpaceServer': MESSAGES.exportSpaceServer,
  'server.exportRunning': MESSAGES.exportRunning,
  'server.exportTooLarge': MESSAGES.exportTooLarge,
  'server.passwordLength': MESSAGES.passwordLength,
  'server.invalidToken': MESSAGES.invalidToken,
  'server.emailTaken': MESSAGES.emailTaken,
  'server.unauthorized': MESSAGES.unauthorized,
  'server.alreadyClaimed': MESSAGES.alreadyClaimed,
  'server.stockTopicTaken': MESSAGES.stockTopicTaken,
  'server.invalidMac': MESSAGES.invalidMac,
  'server.priceStart': MESSAGES.priceStart,
  'server.priceRange': MESSAGES.priceRange,
  'server.pricesRequired': MESSAGES.pricesRequired,
  'server.tooManyPrices': MESSAGES.tooManyPrices,
  'server.priceRow': MESSAGES.priceRow,
  'server.priceDuplicate': MESSAGES.priceDuplicate,
  'server.pricesFull': MESSAGES.pricesFull,
  'server.invalidTimestamp': MESSAGES.invalidTimestamp,
  'server.tooManyRequests': MESSAGES.tooManyRequests,
  'server.tooLarge': MESSAGES.tooLarge,
  'server.malformed': MESSAGES.malformed,
  'server.busy': MESSAGES.busy,
  'server.demoFull': MESSAGES.demoFull,
  'server.sharedMeter': MESSAGES.sharedMeter,
  'server.invalidScheme': MESSAGES.invalidScheme,
  'server.installedPowerRequired': MESSAGES.installedPowerRequired,
  'server.settlementSinceRequired': MESSAGES.settlementSinceRequired,
  'server.noSettlement': MESSAGES.noSettlement,
  'server.settlementNeedsGrid': MESSAGES.settlementNeedsGrid,
} as const;
