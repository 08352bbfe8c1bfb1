/**
 * What the data source reads, supplied by the app that mounts it (the API): the signed-in owner's
 * devices, and their series, energy and voltage quality through the same analytics code that answers
 * `/api/devices/:id/series`, `/energy`, `/voltage-quality` and `/api/tariffs/:id/stats`, so Grafana shows
 * the same numbers.
 * Every call is scoped to the user: another user's device is unknown (the source throws its 404).
 */
import type { Limits } from '@kilowatch/core';
import type { EnergyInterval, SeriesInterval, SeriesResult, Stat } from '@kilowatch/tsdb';

export interface GrafanaDevice {
  id: number;
  name: string;
  location: string | null;
  /** The zone of its day and month buckets. */
  tz: string;
  phases: 1 | 3;
}

export interface EnergyColumns {
  tz: string;
  t: number[];
  import: (number | null)[];
  export: (number | null)[];
  balance: (number | null)[];
}

export interface PhaseShares {
  phase: number;
  samples: number;
  withinWarning: number | null;
  withinCritical: number | null;
  withinEn50160: number | null;
}

/** A tariff of the user's locations, offered as the `tariff` payload of the zone metric. */
export interface GrafanaTariff {
  id: number;
  name: string;
  group: string;
}

/** Billed import per tariff zone per bucket, zoned by the tariff the same way `/api/tariffs/:id/stats` is. */
export interface ZoneColumns {
  tz: string;
  /** The tariff whose zones these are. */
  tariff: GrafanaTariff;
  t: number[];
  zones: { zone: number; energy: (number | null)[] }[];
}

export interface GrafanaSource {
  devices(userId: number): Promise<GrafanaDevice[]>;
  series(
    userId: number,
    deviceId: number,
    query: { params: string[]; from: number; to: number; interval: SeriesInterval; stats: Stat[] },
  ): Promise<SeriesResult>;
  energy(
    userId: number,
    deviceId: number,
    query: { from: number; to: number; interval: EnergyInterval },
  ): Promise<EnergyColumns>;
  /** The tariffs of the user's locations. */
  tariffs(userId: number): Promise<GrafanaTariff[]>;
  /**
   * Energy per tariff zone of one device per whole hour, local day or local month, with the given tariff
   * or the device's own; null when no tariff is given and the device has none.
   */
  zoneEnergy(
    userId: number,
    deviceId: number,
    query: { from: number; to: number; unit: 'hour' | 'day' | 'month'; tariffId?: number },
  ): Promise<ZoneColumns | null>;
  limits(userId: number, deviceId: number): Promise<Limits>;
  voltageQuality(
    userId: number,
    deviceId: number,
    range: { from: number; to: number },
  ): Promise<{ limits: Limits; phases: PhaseShares[] }>;
}
