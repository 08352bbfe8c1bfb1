/** Ingest counters and gauges in the Prometheus text exposition format. */

const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' = 'counter',
  ) {}
  inc(by = 1, labels: Labels = {}): void {
    const key = labelText(labels);
    const cur = this.values.get(key);
    if (cur) cur.value += by;
    else this.values.set(key, { labels, value: by });
  }
  set(value: number, labels: Labels = {}): void {
    this.values.set(labelText(labels), { labels, value });
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelText(labels))?.value ?? 0;
  }
  total(): number {
    let t = 0;
    for (const v of this.values.values()) t += v.value;
    return t;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    if (this.values.size === 0 && this.type === 'gauge') lines.push(`${this.name} 0`);
    for (const { labels, value } of this.values.values())
      lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join('\n');
  }
}

export class Histogram {
  private readonly counts = LATENCY_BUCKETS_S.map(() => 0);
  private sum = 0;
  private count = 0;
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < LATENCY_BUCKETS_S.length; i++)
      if (seconds <= (LATENCY_BUCKETS_S[i] as number)) this.counts[i]!++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    LATENCY_BUCKETS_S.forEach((le, i) => {
      lines.push(`${this.name}_bucket{le="${le}"} ${this.counts[i]}`);
    });
    lines.push(`${this.name}_bucket{le="+Inf"} ${this.count}`);
    lines.push(`${this.name}_sum ${this.sum}`, `${this.name}_count ${this.count}`);
    return lines.join('\n');
  }
}

export function createIngestMetrics() {
  const m = {
    received: new Counter('kilowatch_ingest_messages_received_total', 'MQTT messages received'),
    stored: new Counter('kilowatch_ingest_readings_stored_total', 'Readings committed to the store'),
    rejected: new Counter(
      'kilowatch_ingest_messages_rejected_total',
      'Messages rejected to the dead-letter store, by reason',
    ),
    refused: new Counter(
      'kilowatch_ingest_messages_refused_total',
      'Messages refused, acknowledged and not stored because their meter wrote past its budget, by reason (rate, backdated)',
    ),
    ignored: new Counter(
      'kilowatch_ingest_messages_ignored_total',
      'Well-formed messages carrying nothing to store',
    ),
    statuses: new Counter('kilowatch_ingest_status_messages_total', 'Device status messages'),
    batches: new Counter('kilowatch_ingest_batches_total', 'Batches committed to the store'),
    retried: new Counter('kilowatch_ingest_write_retries_total', 'Store writes retried after a failure'),
    dropped: new Counter(
      'kilowatch_ingest_readings_dropped_total',
      'Readings given up on after the store refused them, by reason',
    ),
    bufferMessages: new Counter(
      'kilowatch_ingest_buffer_messages',
      'Messages received and not yet acknowledged',
      'gauge',
    ),
    bufferReadings: new Counter('kilowatch_ingest_buffer_readings', 'Readings waiting for a commit', 'gauge'),
    paused: new Counter(
      'kilowatch_ingest_paused',
      '1 while the in-flight window is full (backpressure)',
      'gauge',
    ),
    rollupRuns: new Counter(
      'kilowatch_ingest_rollup_runs_total',
      'Rollup refresh runs, by result (skipped: another ingest process held the turn)',
    ),
    rollupBuckets: new Counter(
      'kilowatch_ingest_rollup_buckets_total',
      '15-minute rollup buckets recomputed by this process',
    ),
    writeLatency: new Histogram('kilowatch_ingest_write_duration_seconds', 'Store batch write duration'),
  };
  return {
    ...m,
    text(): string {
      return `${Object.values(m)
        .map((x) => x.render())
        .join('\n')}\n`;
    },
  };
}
export type IngestMetrics = ReturnType<typeof createIngestMetrics>;
