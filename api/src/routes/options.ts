/** Options every route plugin receives from `buildApp`. */

/** Broker and ingest state of the embedded deployment, merged into GET /api/health. */
export type HealthExtras = () => Promise<Record<string, unknown>>;

/** One dependency as `/api/health/ready` names it: whether it answers, and whether this role needs it. */
export interface Dependency {
  ok: boolean;
  required: boolean;
  detail?: string;
  [more: string]: unknown;
}

/** What this process needs to serve its role (docs/api.md §Health). */
export interface Readiness {
  role: 'all' | 'api' | 'ingest';
  /**
   * Whether the telemetry store is needed to be ready: an api replica serves login, devices and settings
   * without it (charts answer 503 meanwhile), so it stays in the load balancer; a process that ingests
   * does need it.
   */
  storeRequired: boolean;
  /** Further dependencies (the MQTT connections), each with whether it is required. */
  dependencies?: () => Record<string, Dependency>;
}

export interface RouteOptions {
  health?: HealthExtras;
  readiness?: Readiness;
}
