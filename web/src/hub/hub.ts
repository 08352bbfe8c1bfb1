/**
 * The live hub (docs/api.md §Real-time hub): one WebSocket per signed-in tab, reconnecting with capped
 * exponential backoff and re-subscribing the devices on screen. No logging: the URL carries the token.
 */
import * as v from 'valibot';

export const HubMessageSchema = v.variant('type', [
  v.object({
    type: v.literal('reading'),
    deviceId: v.union([v.string(), v.number()]),
    ts: v.union([v.number(), v.string()]),
    values: v.record(v.string(), v.nullable(v.number())),
  }),
  v.object({
    type: v.literal('status'),
    deviceId: v.union([v.string(), v.number()]),
    status: v.string(),
    rssi: v.optional(v.nullable(v.number())),
  }),
  v.object({
    type: v.literal('notification'),
    id: v.union([v.string(), v.number()]),
    deviceId: v.union([v.string(), v.number()]),
    kind: v.string(),
    message: v.string(),
    at: v.optional(v.unknown()),
    phase: v.optional(v.nullable(v.number())),
    value: v.optional(v.nullable(v.number())),
    threshold: v.optional(v.nullable(v.number())),
  }),
  v.object({
    type: v.literal('export'),
    id: v.union([v.string(), v.number()]),
    status: v.string(),
    progress: v.optional(v.number()),
  }),
  v.object({ type: v.literal('pong') }),
  v.object({ type: v.literal('subscribed'), deviceIds: v.array(v.union([v.string(), v.number()])) }),
]);
export type HubMessage = v.InferOutput<typeof HubMessageSchema>;

export type HubState = 'connected' | 'disconnected';

/** Delay before reconnect attempt `n` (0-based): 0.5 s doubling to 30 s, with up to 20 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (1 + 0.2 * random()));
}

export interface HubOptions {
  url: (token: string) => string;
  token: () => string | null;
  /** Called when the server closes for an ended session; resolves true when a new token is stored. */
  refresh?: () => Promise<boolean>;
  WebSocketImpl?: typeof WebSocket;
}

export class HubClient {
  private socket: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pinger: ReturnType<typeof setInterval> | null = null;
  private running = false;
  private readonly counts = new Map<string, number>();
  private readonly messageListeners = new Set<(m: HubMessage) => void>();
  private readonly stateListeners = new Set<() => void>();
  private currentState: HubState = 'disconnected';

  constructor(private readonly opts: HubOptions) {}

  get state(): HubState {
    return this.currentState;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    this.open();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.socket?.close(1000);
    this.socket = null;
    this.setState('disconnected');
  }

  /** Reference-counted: two screens showing one device keep it subscribed until both leave. */
  subscribe(deviceIds: readonly (string | number)[]): () => void {
    const fresh: string[] = [];
    for (const raw of deviceIds) {
      const id = String(raw);
      const n = this.counts.get(id) ?? 0;
      this.counts.set(id, n + 1);
      if (n === 0) fresh.push(id);
    }
    if (fresh.length) this.send({ type: 'subscribe', deviceIds: HubClient.wireIds(fresh) });
    return () => {
      const gone: string[] = [];
      for (const raw of deviceIds) {
        const id = String(raw);
        const n = (this.counts.get(id) ?? 1) - 1;
        if (n <= 0) {
          this.counts.delete(id);
          gone.push(id);
        } else this.counts.set(id, n);
      }
      if (gone.length) this.send({ type: 'unsubscribe', deviceIds: HubClient.wireIds(gone) });
    };
  }

  onMessage(listener: (m: HubMessage) => void): () => void {
    this.messageListeners.add(listener);
    return () => this.messageListeners.delete(listener);
  }

  onState(listener: () => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private setState(s: HubState): void {
    if (s === this.currentState) return;
    this.currentState = s;
    for (const l of this.stateListeners) l();
  }

  /** Numeric ids travel as numbers (the hub matches them as such); others as they are. */
  private static wireIds(ids: readonly string[]): (string | number)[] {
    return ids.map((id) => (/^\d+$/.test(id) ? Number(id) : id));
  }

  private send(msg: unknown): void {
    if (this.socket?.readyState === 1) this.socket.send(JSON.stringify(msg));
  }

  private open(): void {
    const token = this.opts.token();
    if (!this.running || !token) return;
    const Impl = this.opts.WebSocketImpl ?? WebSocket;
    const socket = new Impl(this.opts.url(token));
    const usedToken = token;
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.setState('connected');
      if (this.counts.size)
        this.send({ type: 'subscribe', deviceIds: HubClient.wireIds([...this.counts.keys()]) });
      this.pinger = setInterval(() => this.send({ type: 'ping' }), 25_000);
    };
    socket.onmessage = (ev) => {
      let parsed: v.SafeParseResult<typeof HubMessageSchema>;
      try {
        parsed = v.safeParse(HubMessageSchema, JSON.parse(String(ev.data)));
      } catch {
        return;
      }
      if (!parsed.success) return;
      for (const l of this.messageListeners) l(parsed.output);
    };
    socket.onclose = (ev) => {
      if (this.pinger) clearInterval(this.pinger);
      this.pinger = null;
      if (this.socket !== socket) return;
      this.socket = null;
      this.setState('disconnected');
      if (!this.running) return;
      // 1008: the session ended or expired; a refreshed token may reopen it.
      const stale = ev.code === 1008 && this.opts.refresh && this.opts.token() === usedToken;
      const again = stale && this.opts.refresh ? this.opts.refresh() : Promise.resolve(true);
      void again.then((ok) => {
        if (!ok || !this.running) return;
        this.timer = setTimeout(() => this.open(), backoffDelay(this.attempt++));
      });
    };
  }
}
