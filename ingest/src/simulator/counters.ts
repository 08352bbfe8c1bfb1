import { HOUR_MS } from '@kilowatch/core';

/** Counters start integrating here; before it they hold their base value. */
const EPOCH = Date.UTC(2020, 0, 1);

/**
 * A cumulative energy register as a pure function of time: the integral (kWh) of an expected power
 * curve, tabulated per hour from 2020 and interpolated inside the hour. It only ever increases, and
 * the same instant always gives the same value, whatever order readings are generated in.
 */
export class EnergyRegister {
  private cum = new Float64Array(1024);
  private computed = 0;

  constructor(private readonly powerW: (ts: number) => number) {}

  /** kWh accumulated from 2020 to `ts`. */
  at(ts: number): number {
    if (ts <= EPOCH) return 0;
    const x = (ts - EPOCH) / HOUR_MS;
    const h = Math.floor(x);
    this.ensure(h + 1);
    const a = this.cum[h] as number;
    return a + ((this.cum[h + 1] as number) - a) * (x - h);
  }

  private ensure(n: number): void {
    if (n <= this.computed) return;
    if (n >= this.cum.length) {
      const bigger = new Float64Array(Math.max(n + 1, this.cum.length * 2));
      bigger.set(this.cum);
      this.cum = bigger;
    }
    for (let i = this.computed; i < n; i++) {
      const mid = EPOCH + i * HOUR_MS + HOUR_MS / 2;
      this.cum[i + 1] = (this.cum[i] as number) + Math.max(0, this.powerW(mid)) / 1000;
    }
    this.computed = n;
  }
}
