/**
 * Committed readings go live: their devices are seen, and the readings go to the in-process live bus
 * and, when asked, to `kilowatch/live/<deviceKey>` (QoS 0) for api replicas.
 */
import { encodeLiveReading, encodeLiveRejection, type Reading, TOPICS } from '@kilowatch/core';
import type { LocalLiveBus } from '../liveBus.ts';
import type { DeviceStates, Rejection } from './deviceStates.ts';
import { columnReadings, type Unit } from './units.ts';

/** Where live readings are published over MQTT (the bridge's own connection), if anywhere. */
export interface LiveOutlet {
  connected(): boolean;
  publish(topic: string, payload: string): void;
}

export class LivePublisher {
  constructor(
    private readonly bus: LocalLiveBus,
    private readonly states: DeviceStates,
    private readonly outlet: LiveOutlet | null,
  ) {}

  /**
   * A committed batch. Readings decoded in the worker thread are rebuilt from their columns only when
   * someone listens; otherwise only their devices' newest times are noted.
   */
  committed(batch: readonly Unit[]): void {
    const live = this.bus.hasReadingListeners || Boolean(this.outlet?.connected());
    for (const u of batch) {
      for (const r of u.readings) this.publish(r);
      const c = u.columns;
      if (!c) continue;
      if (live) for (const r of columnReadings(c, u.seq)) this.publish(r);
      else
        for (let d = 0; d < c.keys.length; d++)
          this.states.touch({ deviceKey: c.keys[d]!, ts: c.maxByDev[d]! });
    }
  }

  /** A device's refused message: API processes beside an external broker report it on its connection route. */
  rejected(deviceKey: string, rejection: Rejection): void {
    if (this.outlet?.connected())
      this.outlet.publish(TOPICS.rejected(deviceKey), encodeLiveRejection(rejection));
  }

  private publish(r: Reading): void {
    this.states.touch(r);
    this.bus.emitReading(r);
    if (this.outlet?.connected()) this.outlet.publish(TOPICS.live(r.deviceKey), encodeLiveReading(r));
  }
}
