/**
 * What the data source reads, supplied by the app that mounts it (the API): the signed-in owner's
 * devices, and their series, energy and voltage quality through the same analytics code that answers
 * `/api/devices/:id/series`, `/energy` and `/voltage-quality`, so Grafana shows the same numbers.
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
  limits(userId: number, deviceId: number): Promise<Limits>;
  voltageQuality(
    userId: number,
    deviceId: number,
    range: { from: number; to: number },
  ): Promise<{ limits: Limits; phases: PhaseShares[] }>;
}
