/**
 * Each meter's write budget: how many readings one device may have stored, a second and at once, and how
 * many of them may be backdated (older than `backdatedAfterMs` by the ingest clock). Two token buckets per
 * device: every reading takes a token from the first, a backdated one also from the second. A meter whose
 * bucket is empty (or in debt) has its messages refused before they are decoded: they are acknowledged,
 * not stored, counted, and noted as the device's last refusal. So a flood costs the bridge a topic lookup
 * per message, never a place in the shared in-flight window or a store write.
 *
 * A message's readings are known only once decoded, so they are charged then and the bucket may go into
 * debt, paid off before the meter is admitted again: the rate over time is the bound, and a burst can pass
 * it by what one meter had in decoding at once (one message attached to the embedded broker, which reads
 * nothing more from a meter until it is acknowledged; over MQTT, the meter's messages of one chunk).
 */

export interface MeterLimits {
  /** Readings one meter may have stored a second, sustained. 0: no bound. */
  readingsPerSecond: number;
  /** Readings it may write at once beyond that (the backlog a meter sends after an outage). */
  readingsBurst: number;
  /** Backdated readings one meter may have stored a second, sustained. 0: no bound on them. */
  backdatedPerSecond: number;
  /** Backdated readings it may write at once. */
  backdatedBurst: number;
  /** A reading this much older than the ingest clock is backdated. */
  backdatedAfterMs: number;
}

/** The deployment's defaults (`KW_METER_*`, docs/configuration.md). */
export const DEFAULT_METER_LIMITS: MeterLimits = {
  readingsPerSecond: 20,
  readingsBurst: 30_000,
  backdatedPerSecond: 2,
  backdatedBurst: 30_000,
  backdatedAfterMs: 3_600_000,
};

export type Refusal = 'rate' | 'backdated';

interface Bucket {
  /** Readings it may still write now (negative: debt). */
  tokens: number;
  backdated: number;
  /** The clock when the buckets were last filled. */
  at: number;
  /** Messages admitted and not yet charged (in the decode thread). */
  uncharged: number;
  /** Readings a message of this device carried lately: what an uncharged one is reckoned to cost. */
  perMessage: number;
  /** When its last refusal was reported (live, device state), on the ingest clock. */
  reportedAt: number;
  /** Messages refused since then. */
  refusedSince: number;
}

/** Devices whose budget is kept, at most (the one seen longest ago is forgotten first: a full bucket). */
const MAX_DEVICES = 100_000;

export class MeterBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limits: MeterLimits,
    private readonly now: () => number,
  ) {}

  /** Whether the budget bounds anything. */
  get active(): boolean {
    return this.limits.readingsPerSecond > 0 || this.limits.backdatedPerSecond > 0;
  }

  /**
   * Whether a device's next message may go on (null) or why it is refused. `uncharged` counts it as
   * admitted and charged later (`charged`), when its readings are decoded elsewhere.
   */
  admit(deviceKey: string, uncharged = false): Refusal | null {
    if (!this.active || !deviceKey) return null;
    const b = this.fill(deviceKey);
    const owed = b.uncharged * b.perMessage;
    if (this.limits.readingsPerSecond > 0 && b.tokens - owed < 1) return this.refused(b, 'rate');
    if (this.limits.backdatedPerSecond > 0 && b.backdated - owed < 1) return this.refused(b, 'backdated');
    if (uncharged) b.uncharged++;
    return null;
  }

  /**
   * A device's decoded readings taken from its buckets (`backdated` of them older than
   * `backdatedBefore()`); they came in `messages` messages, admitted uncharged when `uncharged`.
   */
  charge(deviceKey: string, readings: number, backdated: number, messages: number, uncharged: boolean): void {
    if (!this.active || !deviceKey) return;
    const b = this.fill(deviceKey);
    if (uncharged) b.uncharged = Math.max(0, b.uncharged - messages);
    if (messages > 0) b.perMessage = Math.max(1, readings / messages);
    b.tokens -= readings;
    b.backdated -= backdated;
  }

  /** The cut-off of backdated readings now. */
  backdatedBefore(): number {
    return this.now() - this.limits.backdatedAfterMs;
  }

  /**
   * Whether this refusal should be reported (live and in the device's state): the first of a flood,
   * then at most once a second; answers how many were refused since the last report.
   */
  report(deviceKey: string): number | null {
    const b = this.buckets.get(deviceKey);
    if (!b) return null;
    const t = this.now();
    if (b.reportedAt !== Number.NEGATIVE_INFINITY && t - b.reportedAt < 1000) return null;
    b.reportedAt = t;
    const n = b.refusedSince;
    b.refusedSince = 0;
    return n;
  }

  private refused(b: Bucket, why: Refusal): Refusal {
    b.refusedSince++;
    return why;
  }

  private fill(deviceKey: string): Bucket {
    const { readingsPerSecond, readingsBurst, backdatedPerSecond, backdatedBurst } = this.limits;
    const t = this.now();
    let b = this.buckets.get(deviceKey);
    if (!b) {
      b = {
        tokens: readingsBurst,
        backdated: backdatedBurst,
        at: t,
        uncharged: 0,
        perMessage: 1,
        reportedAt: Number.NEGATIVE_INFINITY,
        refusedSince: 0,
      };
      this.buckets.set(deviceKey, b);
      if (this.buckets.size > MAX_DEVICES) this.buckets.delete(this.buckets.keys().next().value as string);
      return b;
    }
    // Seen again: last in the order of forgetting.
    this.buckets.delete(deviceKey);
    this.buckets.set(deviceKey, b);
    const s = Math.max(0, t - b.at) / 1000;
    b.at = Math.max(b.at, t);
    b.tokens = Math.min(readingsBurst, b.tokens + s * readingsPerSecond);
    b.backdated = Math.min(backdatedBurst, b.backdated + s * backdatedPerSecond);
    return b;
  }
}
