/**
 * Every screen of docs/spec.md §2 declared once, as data: the router builds its routes from this list and
 * the navigation menu shows the entries that have a `nav` slot.
 */
import type { QueryClient } from '@tanstack/react-query';
import type { ComponentType } from 'react';
import * as v from 'valibot';
import { userInfoQueryOptions } from '../api/account/user-info.ts';
import { deviceQueryOptions } from '../api/devices/get-device.ts';
import { devicesQueryOptions } from '../api/devices/get-devices.ts';
import { locationQueryOptions } from '../api/locations/get-location.ts';
import { locationsQueryOptions } from '../api/locations/get-locations.ts';
import { tariffQueryOptions } from '../api/locations/get-tariff.ts';
import { AnalyticsSearchSchema, SearchIdSchema } from '../features/analytics/search.ts';
import type { MessageId } from '../i18n/i18n.ts';

export interface LoaderArgs {
  queryClient: QueryClient;
  params: Record<string, string>;
}

export interface Screen {
  /** TanStack Router path (`$id` for a parameter). */
  path: string;
  title: MessageId;
  load: () => Promise<{ default: ComponentType }>;
  /** Shown in the main menu, in this order. */
  nav?: boolean;
  /** Warms the query cache with the same options the screen's hooks read. */
  loader?: (args: LoaderArgs) => Promise<unknown>;
  /** URL search parameters the screen reads, validated. */
  search?: v.GenericSchema<unknown, Record<string, unknown>>;
}

const details = () => import('../features/devices/DeviceDetailsPage.tsx');
const deviceLoader = ({ queryClient, params }: LoaderArgs) =>
  queryClient.ensureQueryData(deviceQueryOptions(params.id ?? ''));

export const SCREENS: readonly Screen[] = [
  {
    path: '/dashboard',
    title: 'nav.dashboard',
    nav: true,
    load: () => import('../features/dashboard/DashboardPage.tsx'),
    loader: ({ queryClient }) => queryClient.ensureQueryData(devicesQueryOptions()),
  },
  { path: '/device-energy-details/$id', title: 'details.energy', load: details, loader: deviceLoader },
  { path: '/device-details/$id', title: 'details.power', load: details, loader: deviceLoader },
  { path: '/thermo-device-details/$id', title: 'details.temperature', load: details, loader: deviceLoader },
  { path: '/single-phase-device-details/$id', title: 'details.power', load: details, loader: deviceLoader },
  { path: '/solar-device-details/$id', title: 'details.production', load: details, loader: deviceLoader },
  {
    path: '/edit-device/$id',
    title: 'edit.title',
    load: () => import('../features/devices/EditDevicePage.tsx'),
    loader: deviceLoader,
  },
  {
    path: '/device/import/$id',
    title: 'imports.title',
    load: () => import('../features/imports/ImportPage.tsx'),
    loader: deviceLoader,
  },
  {
    path: '/device/add',
    title: 'add.title',
    load: () => import('../features/devices/AddDevicePage.tsx'),
    loader: ({ queryClient }) => queryClient.ensureQueryData(locationsQueryOptions()),
  },
  {
    path: '/user/profile',
    title: 'page.profile',
    nav: true,
    load: () => import('../features/profile/ProfilePage.tsx'),
    loader: ({ queryClient }) => queryClient.ensureQueryData(userInfoQueryOptions()),
  },
  {
    path: '/device/overview/$id',
    title: 'overview.title',
    load: () => import('../features/devices/OverviewPage.tsx'),
    loader: deviceLoader,
  },
  {
    path: '/device/data-log',
    title: 'log.title',
    nav: true,
    load: () => import('../features/devices/DataLogPage.tsx'),
    // An id that does not fit is dropped (no device chosen), never an error page.
    search: v.object({ device: v.fallback(v.optional(SearchIdSchema), undefined) }),
    loader: ({ queryClient }) => queryClient.ensureQueryData(devicesQueryOptions()),
  },
  {
    path: '/analytics',
    title: 'page.analytics',
    nav: true,
    load: () => import('../features/analytics/AnalyticsPage.tsx'),
    search: AnalyticsSearchSchema,
    loader: ({ queryClient }) => queryClient.ensureQueryData(devicesQueryOptions()),
  },
  {
    path: '/stats/tariff/$id',
    title: 'page.tariffStats',
    load: () => import('../features/tariffs/TariffStatsPage.tsx'),
    loader: ({ queryClient }) => queryClient.ensureQueryData(devicesQueryOptions()),
  },
  {
    path: '/location/index',
    title: 'page.locations',
    nav: true,
    load: () => import('../features/locations/LocationsPage.tsx'),
    loader: ({ queryClient }) => queryClient.ensureQueryData(locationsQueryOptions()),
  },
  {
    path: '/location/view/$id',
    title: 'page.location',
    load: () => import('../features/locations/LocationViewPage.tsx'),
    loader: ({ queryClient, params }) => queryClient.ensureQueryData(locationQueryOptions(params.id ?? '')),
  },
  {
    path: '/location/edit/$id',
    title: 'page.locationEdit',
    load: () => import('../features/locations/LocationEditPage.tsx'),
    // `new` opens an empty form.
    loader: ({ queryClient, params }) =>
      params.id === 'new'
        ? Promise.resolve(null)
        : queryClient.ensureQueryData(locationQueryOptions(params.id ?? '')),
  },
  {
    path: '/location/tariff-edit/$locationId/$tariffId',
    title: 'page.tariffEdit',
    load: () => import('../features/tariffs/TariffEditPage.tsx'),
    // `new` as the tariff id adds a tariff version to the location.
    loader: ({ queryClient, params }) =>
      Promise.all([
        queryClient.ensureQueryData(locationQueryOptions(params.locationId ?? '')),
        params.tariffId === 'new'
          ? undefined
          : queryClient.ensureQueryData(tariffQueryOptions(params.locationId ?? '', params.tariffId ?? '')),
      ]),
  },
  { path: '/404', title: 'notFound.title', load: () => import('../features/shell/NotFoundPage.tsx') },
];

/** The menu: navigation entries in declaration order. */
export const NAVIGATION = SCREENS.filter((s) => s.nav).map((s) => ({ to: s.path, label: s.title }));

/** The screen whose path matches `pathname` (`$param` segments match any one segment). */
export function screenFor(pathname: string): Screen | undefined {
  const parts = pathname.replace(/\/+$/, '').split('/');
  return SCREENS.find((screen) => {
    const pattern = screen.path.split('/');
    return (
      pattern.length === parts.length &&
      pattern.every((seg, i) => (seg.startsWith('$') ? parts[i] !== '' : seg === parts[i]))
    );
  });
}
