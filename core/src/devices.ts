/** Device types and the type-code → details-page rule (docs/spec.md §2). */

export type DetailsPage = 'energy' | 'solar' | 'thermostat' | 'single-phase' | 'three-phase';

export const DEVICE_TYPES = {
  threePhase: { code: 1, name: 'Three-phase meter' },
  singlePhase: { code: 2, name: 'Single-phase meter' },
  solar: { code: 10, name: 'Solar installation' },
  energy: { code: 13, name: 'Energy meter' },
  energyBidirectional: { code: 16, name: 'Bidirectional energy meter' },
  thermostat: { code: 17, name: 'Thermostat' },
} as const;

/**
 * Types 13 and 16 go to energy details, 10 to solar, 17 to thermostat; any other type to the
 * three-phase details page, or the single-phase one when the model reports one phase (docs/api.md §Devices).
 */
export function detailsPageFor(typeCode: number, phases: 1 | 3 = 3): DetailsPage {
  if (typeCode === 13 || typeCode === 16) return 'energy';
  if (typeCode === 10) return 'solar';
  if (typeCode === 17) return 'thermostat';
  return phases === 1 ? 'single-phase' : 'three-phase';
}

const ROUTES: Record<DetailsPage, string> = {
  energy: '/device-energy-details',
  solar: '/solar-device-details',
  thermostat: '/thermo-device-details',
  'single-phase': '/single-phase-device-details',
  'three-phase': '/device-details',
};

export function detailsPathFor(id: string | number, typeCode: number, phases: 1 | 3 = 3): string {
  return `${ROUTES[detailsPageFor(typeCode, phases)]}/${id}`;
}

/** A device key is the MAC as 12 lowercase hex digits (docs/api.md §MQTT). */
export const DEVICE_KEY_PATTERN = /^[0-9a-f]{12}$/;

/** Normalises a MAC in any common notation (`AA:BB:CC:DD:EE:FF`, `aabb.ccdd.eeff`) to a device key. */
export function deviceKeyFromMac(mac: string): string | null {
  const key = mac.toLowerCase().replace(/[^0-9a-f]/g, '');
  return DEVICE_KEY_PATTERN.test(key) && mac.replace(/[:\-.\s]/g, '').length === 12 ? key : null;
}

/** RSSI below this marks a device `weak-signal` ("Network connection problem"). */
export const WEAK_SIGNAL_DBM = -80;

export type DeviceStatus = 'online' | 'offline' | 'weak-signal';
