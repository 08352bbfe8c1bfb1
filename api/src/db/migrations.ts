/**
 * Ordered metadata migrations, the same on PGlite and PostgreSQL. Each runs once, in order, inside a
 * transaction; applied versions are recorded in `schema_migrations`. Append only — never edit an applied one.
 * Times are epoch milliseconds (bigint) so both engines hand back plain numbers.
 */
import type { Sql } from './sql.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and sessions',
    sql: `
create table users (
  id integer generated always as identity primary key,
  email text not null unique,
  password_hash text not null,
  full_name text not null,
  country text not null,
  timezone text not null,
  language text not null,
  is_demo boolean not null default false,
  created_at bigint not null,
  updated_at bigint not null
);
create table sessions (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  remember boolean not null,
  created_at bigint not null,
  expires_at bigint not null,
  revoked_at bigint,
  revoked_reason text
);
create index sessions_user on sessions(user_id);
create table access_tokens (
  token_hash text primary key,
  session_id integer not null references sessions(id) on delete cascade,
  expires_at bigint not null
);
create index access_tokens_session on access_tokens(session_id);
create table refresh_tokens (
  token_hash text primary key,
  session_id integer not null references sessions(id) on delete cascade,
  expires_at bigint not null,
  used_at bigint
);
create index refresh_tokens_session on refresh_tokens(session_id);
create table password_resets (
  token_hash text primary key,
  user_id integer not null references users(id) on delete cascade,
  created_at bigint not null,
  expires_at bigint not null,
  used_at bigint
);
create index password_resets_user on password_resets(user_id);
`,
  },
  {
    version: 2,
    name: 'locations, tariffs and devices',
    sql: `
create table locations (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  name text not null,
  code text not null default '',
  address text not null default '',
  city text not null default '',
  timezone text not null,
  tariff_id integer,
  created_at bigint not null,
  updated_at bigint not null
);
create index locations_user on locations(user_id);
create table tariffs (
  id integer generated always as identity primary key,
  location_id integer not null references locations(id) on delete cascade,
  user_id integer not null references users(id) on delete cascade,
  name text not null,
  tariff_group text not null,
  operator text,
  zone1_price double precision not null,
  zone2_price double precision not null,
  zone3_price double precision not null,
  fixed_price double precision not null,
  currency text not null,
  valid_from text not null,
  valid_to text,
  clock_basis text not null default 'local',
  schedule jsonb,
  created_at bigint not null,
  updated_at bigint not null
);
create index tariffs_location on tariffs(location_id);
alter table locations add constraint locations_tariff foreign key (tariff_id) references tariffs(id) on delete set null;
create table devices (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  device_key text not null unique,
  mac text not null,
  name text not null,
  friendly_name text not null default '',
  model text not null default '',
  type_code integer not null,
  phases integer not null default 3,
  location_id integer references locations(id) on delete set null,
  tariff_id integer references tariffs(id) on delete set null,
  billing_start text not null,
  billing_months integer not null default 1,
  registered_at bigint not null,
  modified_at bigint not null
);
create index devices_user on devices(user_id);
create table notification_settings (
  device_id integer primary key references devices(id) on delete cascade,
  enabled boolean not null,
  voltage_drop double precision not null,
  voltage_rise double precision not null,
  total_consumption double precision not null,
  disable_at_night boolean not null,
  interval_minutes integer not null,
  mute_all boolean not null
);
create table device_limits (
  device_id integer primary key references devices(id) on delete cascade,
  warning double precision not null,
  critical double precision not null
);
create table meter_offsets (
  id integer generated always as identity primary key,
  device_id integer not null references devices(id) on delete cascade,
  param text not null,
  at bigint not null,
  value double precision not null,
  counter_value double precision not null,
  "offset" double precision not null,
  created_at bigint not null
);
create index meter_offsets_device on meter_offsets(device_id, param, at);
`,
  },
  {
    version: 3,
    name: 'comparisons, export jobs and notifications',
    sql: `
create table comparisons (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  name text not null,
  grouped boolean not null default false,
  created_at bigint not null,
  updated_at bigint not null
);
create index comparisons_user on comparisons(user_id);
create table comparison_members (
  comparison_id integer not null references comparisons(id) on delete cascade,
  position integer not null,
  device_id integer not null references devices(id) on delete cascade,
  param text not null,
  primary key (comparison_id, position)
);
create table export_jobs (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  status text not null,
  progress double precision not null default 0,
  request jsonb not null,
  file_name text not null,
  file_path text,
  size bigint,
  error text,
  created_at bigint not null,
  updated_at bigint not null
);
create index export_jobs_user on export_jobs(user_id);
create table notifications (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  kind text not null,
  message text not null,
  at bigint not null,
  read boolean not null default false
);
create index notifications_user on notifications(user_id, id);
`,
  },
  {
    version: 100,
    name: 'export job expiry and format',
    sql: `
alter table export_jobs add column expires_at bigint;
alter table export_jobs add column format text not null default 'csv';
create index export_jobs_status on export_jobs(status, id);
create index export_jobs_expiry on export_jobs(expires_at)
`,
  },
  {
    version: 101,
    name: 'alert state shared by API processes',
    sql: `
create table alert_states (
  device_id integer primary key references devices(id) on delete cascade,
  state jsonb not null,
  updated_at bigint not null
)
`,
  },
  {
    version: 102,
    name: "what a notification measured, for messages in the reader's language",
    sql: `
alter table notifications add column phase smallint;
alter table notifications add column value double precision;
alter table notifications add column threshold double precision
`,
  },
  {
    version: 103,
    name: 'personal API keys (read-only, stored hashed)',
    sql: `
create table api_keys (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  name text not null,
  key_hash text not null unique,
  created_at bigint not null,
  last_used_at bigint
);
create index api_keys_user on api_keys(user_id)
`,
  },
  {
    version: 190,
    name: "meters' MQTT accounts",
    sql: `
alter table devices add column mqtt_username text;
alter table devices add column mqtt_password_hash text;
alter table devices add column mqtt_credentials_at bigint;
create unique index devices_mqtt_username on devices(mqtt_username)
`,
  },
  {
    version: 220,
    name: 'login and refresh budgets shared by API processes',
    sql: `
create table rate_limits (key text primary key, n integer not null, until bigint not null);
create index rate_limits_until on rate_limits(until)
`,
  },
  {
    version: 202,
    name: 'demo workspaces: per-visitor copies over the shared simulated meters',
    sql: `
alter table users add column workspace_expires_at bigint;
create index users_workspace_expiry on users(workspace_expires_at) where workspace_expires_at is not null;
alter table devices add column shared_telemetry boolean not null default false;
alter table devices drop constraint devices_device_key_key;
create unique index devices_device_key on devices(device_key) where not shared_telemetry;
create index devices_key_all on devices(device_key)
`,
  },
  {
    version: 239,
    name: "meters' stock Tasmota names held by one device each",
    sql: `
alter table devices add column stock_suffix text;
update devices set stock_suffix = upper(right(device_key, 6)) where not shared_telemetry and id = (
  select min(e.id) from devices e where not e.shared_telemetry and right(e.device_key, 6) = right(devices.device_key, 6));
create unique index devices_stock_suffix on devices(stock_suffix)
`,
  },
  {
    version: 420,
    name: "devices' roles in their location's energy flows, one grid meter per location",
    sql: `
alter table devices add column role text;
update devices set role = case when type_code = 10 then 'production'
  when type_code in (13, 16) then 'grid' else 'consumer' end;
update devices set role = 'consumer' where role = 'grid' and location_id is not null and id <> (
  select min(e.id) from devices e where e.role = 'grid' and e.location_id = devices.location_id);
alter table devices alter column role set not null;
-- A process of the previous release, still claiming during a rolling upgrade, names no role.
alter table devices alter column role set default 'consumer';
alter table devices add constraint devices_role check (role in ('grid', 'production', 'storage', 'consumer'));
create unique index devices_one_grid on devices(location_id) where role = 'grid'
`,
  },
  {
    version: 421,
    name: "locations' price series (market or day-ahead prices per interval start)",
    sql: `
create table location_prices (
  location_id integer not null references locations(id) on delete cascade,
  start bigint not null,
  price double precision not null,
  primary key (location_id, start)
)
`,
  },
  {
    version: 422,
    name: "locations' prosumer settlement (none, net-metering with its installed power, net-billing; since a day)",
    sql: `
alter table locations add column settlement_scheme text not null default 'none';
alter table locations add constraint locations_settlement_scheme check (settlement_scheme in ('none', 'net-metering', 'net-billing'));
alter table locations add column settlement_kw double precision;
alter table locations add column settlement_since text
`,
  },
  {
    version: 430,
    name: 'history imports: one job per file, its counts, first errors and what it inserted (for undo)',
    sql: `
create table history_imports (
  id integer generated always as identity primary key,
  user_id integer not null references users(id) on delete cascade,
  device_id integer not null references devices(id) on delete cascade,
  device_key text not null,
  format text not null,
  state text not null check (state in ('running', 'done', 'failed', 'undoing', 'undone')),
  bytes_read bigint not null default 0,
  rows_read bigint not null default 0,
  accepted bigint not null default 0,
  duplicates bigint not null default 0,
  rejected bigint not null default 0,
  conflicts bigint not null default 0,
  range_from bigint,
  range_to bigint,
  errors jsonb not null default '[]',
  conflict_list jsonb not null default '[]',
  inserted jsonb not null default '[]',
  undo_refused text,
  failure text,
  started_at bigint not null,
  finished_at bigint,
  undone_at bigint,
  updated_at bigint not null
);
create index history_imports_device on history_imports(device_id, id);
-- One import (or undo) at a time per account, whichever process takes it.
create unique index history_imports_one_running on history_imports(user_id) where state in ('running', 'undoing');
create table history_import_errors (
  import_id integer not null references history_imports(id) on delete cascade,
  n integer not null,
  line integer not null,
  col text,
  reason text not null,
  primary key (import_id, n)
)
`,
  },
  {
    version: 440,
    name: 'detector alerts (phase overload and imbalance, offline meter) and account webhooks',
    sql: `
alter table notification_settings add column fuse_a double precision;
alter table notification_settings add column overload_share double precision not null default 0.9;
alter table notification_settings add column overload_seconds integer not null default 60;
alter table notification_settings add column imbalance_share double precision default 0.5;
alter table notification_settings add column offline boolean not null default false;
alter table notification_settings add column offline_factor double precision not null default 5;
create table webhooks (
  user_id integer primary key references users(id) on delete cascade,
  url text not null,
  secret text not null,
  secret_created_at bigint not null,
  updated_at bigint not null
)
`,
  },
  {
    version: 431,
    name: 'history imports with onConflict=replace: the choice, and the stored readings each import replaced (for undo)',
    sql: `
alter table history_imports add column on_conflict text not null default 'keep';
alter table history_imports add constraint history_imports_on_conflict check (on_conflict in ('keep', 'replace'));
-- Every value stored at a time before the import replaced some (vals), and whether the file added a
-- parameter the time did not have (adds: undo removes the reading before writing it back).
create table history_import_replaced (
  import_id integer not null references history_imports(id) on delete cascade,
  ts bigint not null,
  vals jsonb not null,
  adds boolean not null,
  primary key (import_id, ts)
)
`,
  },
  {
    version: 450,
    name: 'daily detector alerts (base load, unusual consumption, solar), alert email, daily evaluations',
    sql: `
alter table notification_settings add column base_load boolean not null default false;
alter table notification_settings add column base_load_share double precision not null default 0.3;
alter table notification_settings add column unusual boolean not null default false;
alter table notification_settings add column unusual_share double precision not null default 0.5;
alter table notification_settings add column solar boolean not null default false;
alter table notification_settings add column solar_share double precision not null default 0.4;
alter table notification_settings add column email boolean not null default false;
create table daily_alert_runs (
  device_id integer not null references devices(id) on delete cascade,
  day text not null,
  kind text not null,
  notification_id integer,
  evaluated_at bigint not null,
  primary key (device_id, day, kind)
);
create table daily_alert_states (
  device_id integer primary key references devices(id) on delete cascade,
  state jsonb not null,
  updated_at bigint not null
)
`,
  },
];

/**
 * Applies every migration not yet recorded, in version order. Returns the versions applied now. Runs
 * under a lock across processes: replicas starting together on an empty database take turns, and the
 * ones after the first find everything applied.
 */
export async function migrate(sql: Sql, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const run = await sql.exclusive('migrations', () => migrateLocked(sql, migrations));
  return run.ran ? run.value : [];
}

async function migrateLocked(sql: Sql, migrations: readonly Migration[]): Promise<number[]> {
  await sql.exec(
    'create table if not exists schema_migrations (version integer primary key, name text not null, applied_at bigint not null)',
  );
  const done = new Set(
    (await sql.query<{ version: number }>('select version from schema_migrations')).rows.map((r) =>
      Number(r.version),
    ),
  );
  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue;
    await sql.transaction(async (tx) => {
      for (const statement of splitStatements(m.sql)) await tx.query(statement);
      await tx.query('insert into schema_migrations (version, name, applied_at) values ($1, $2, $3)', [
        m.version,
        m.name,
        Date.now(),
      ]);
    });
    applied.push(m.version);
  }
  return applied;
}

/** Our migrations hold no semicolons inside literals or bodies, so a split on `;` is exact. */
function splitStatements(text: string): string[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
