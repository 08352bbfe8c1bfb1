/**
 * Wires the hub into the app: started after sign-in, stopped on sign-out; readings land in the query
 * cache so live values and charts update in place; notifications and weak signal become toasts.
 */

import type { Device, SeriesBlock } from '@kilowatch/core';
import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useEffect, useMemo, useSyncExternalStore } from 'react';
import { refreshSession } from '../api/client.ts';
import { NOTIFICATIONS_KEY } from '../api/notifications/notifications.ts';
import { type Latest, latestQueryKey } from '../api/telemetry/get-latest.ts';
import { getSession, useSession } from '../auth/session.ts';
import { alertMessage, i18n, kindTitleId } from '../i18n/i18n.ts';
import { notify, notifyAlert } from '../lib/notify.ts';
import { type HubClient as Hub, HubClient, type HubMessage, type HubState } from './hub.ts';
import { appendReading } from './liveSeries.ts';

const HubContext = createContext<Hub | null>(null);

function hubUrl(token: string): string {
  const proto = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${proto}://${location.host}/hubs/dashboardHub?access_token=${encodeURIComponent(token)}`;
}

function toMs(ts: number | string): number {
  return typeof ts === 'number' ? ts : Date.parse(ts.includes('T') ? ts : `${ts.replace(' ', 'T')}Z`);
}

/** Appends a live reading to cached live series of the device (`appendReading`). */
export function applyReading(qc: QueryClient, msg: Extract<HubMessage, { type: 'reading' }>): void {
  const id = String(msg.deviceId);
  const ts = toMs(msg.ts);
  qc.setQueryData<Latest>(latestQueryKey(id), (prev) => ({
    ts,
    values: { ...(prev?.values ?? {}), ...msg.values },
  }));
  for (const [key, data] of qc.getQueriesData<SeriesBlock>({ queryKey: ['devices', id, 'series'] })) {
    const q = key[3] as { to?: number; live?: boolean } | undefined;
    if (!data || !q?.live) continue;
    const next = appendReading(data, ts, msg.values);
    if (next) qc.setQueryData<SeriesBlock>(key, next);
  }
}

function applyStatus(qc: QueryClient, msg: Extract<HubMessage, { type: 'status' }>): void {
  const status = msg.status === 'online' || msg.status === 'weak-signal' ? msg.status : 'offline';
  qc.setQueryData<Device[]>(['devices'], (list) =>
    list?.map((d) => (String(d.id) === String(msg.deviceId) ? { ...d, status } : d)),
  );
  if (status === 'weak-signal') {
    const name = qc
      .getQueryData<Device[]>(['devices'])
      ?.find((d) => String(d.id) === String(msg.deviceId))?.name;
    notify({
      id: `weak-${msg.deviceId}`,
      color: 'yellow',
      title: i18n._('msg.weakSignal'),
      message: name ?? String(msg.deviceId),
    });
  }
}

/**
 * The hub reconnects after a refresh unless the refresh token was refused: a busy or unreachable server
 * is simply tried again by the hub's own back-off.
 */
async function reconnectAfterRefresh(): Promise<boolean> {
  return (await refreshSession()) !== 'refused';
}

export function HubProvider({ children }: { children: ReactNode }) {
  const qc = useQueryClient();
  const { token, verified } = useSession();
  const hub = useMemo(
    () => new HubClient({ url: hubUrl, token: () => getSession().token, refresh: reconnectAfterRefresh }),
    [],
  );
  // Connects once the token is known good, so a stale token never reaches the hub.
  const signedIn = token !== null && verified;

  useEffect(() => {
    if (!signedIn) return;
    hub.start();
    return () => hub.stop();
  }, [hub, signedIn]);

  useEffect(
    () =>
      hub.onMessage((msg) => {
        if (msg.type === 'reading') applyReading(qc, msg);
        else if (msg.type === 'status') applyStatus(qc, msg);
        else if (msg.type === 'notification') {
          const title = kindTitleId(msg.kind);
          notifyAlert({ title: title ? i18n._(title) : msg.kind, message: alertMessage(msg) });
          void qc.invalidateQueries({ queryKey: NOTIFICATIONS_KEY });
        }
      }),
    [hub, qc],
  );

  return <HubContext.Provider value={hub}>{children}</HubContext.Provider>;
}

export function useHub(): Hub | null {
  return useContext(HubContext);
}

const noop = () => () => {};

export function useHubState(): HubState {
  const hub = useHub();
  return useSyncExternalStore(
    hub ? (l) => hub.onState(l) : noop,
    () => hub?.state ?? 'disconnected',
    () => 'disconnected',
  );
}

/** Subscribes the devices on screen for as long as the caller is mounted. */
export function useLiveDevices(deviceIds: readonly (string | number)[]): void {
  const hub = useHub();
  const key = deviceIds.join(',');
  useEffect(() => {
    if (!hub || !key) return;
    return hub.subscribe(key.split(','));
  }, [hub, key]);
}
