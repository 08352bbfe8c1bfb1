import { type Device, detailsPageFor } from '@kilowatch/core';
import { Alert, Card, Group, SegmentedControl, Select, Skeleton, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo } from 'react';
import { type HeatmapKind, useHeatmap } from '../../api/analytics/get-heatmap.ts';
import { latestQueryOptions } from '../../api/telemetry/get-latest.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { useChartTheme } from '../../charts/useChartTheme.ts';
import { useT } from '../../i18n/i18n.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { todayIn } from '../../ranges/RangeControl.tsx';
import { ownParams } from '../../shared/devices/logParams.ts';
import { paramName, paramSelectData, paramUnit } from '../../shared/devices/paramNames.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { selectWidth } from '../../shared/ui/selectWidth.ts';
import { HEATMAP_DEFAULT_DAYS, lastDays, rangeOfDays } from './dates.ts';
import { defaultHeatmapParam, heatmapParamsFor, valueDomain } from './heatmapScale.ts';
import { HEATMAP_KIND_VALUES } from './search.ts';
import { useAnalyticsSearch } from './useAnalyticsSearch.ts';

const HeatmapChart = lazy(() => import('./HeatmapChart.tsx'));

export function HeatmapSection({ devices }: { devices: readonly Device[] }) {
  const { t } = useT();
  const tz = displayTimeZone();
  const theme = useChartTheme();
  const [search, setSearch] = useAnalyticsSearch();
  const kind: HeatmapKind = search.kind ?? 'daily';
  const deviceId = search.device ? Number(search.device) : devices[0] ? Number(devices[0].id) : null;
  const device = devices.find((d) => Number(d.id) === deviceId);
  // Only what the device reports is offered, and it opens on what fits it (a PV installation's production).
  const latest = useQuery({ ...latestQueryOptions(String(deviceId ?? '')), enabled: deviceId !== null });
  const available = useMemo(() => heatmapParamsFor(ownParams(latest.data?.values)), [latest.data]);
  const solar = device !== undefined && detailsPageFor(device.typeCode, device.phases ?? 3) === 'solar';
  const param = search.param ?? defaultHeatmapParam(available, solar);
  const today = todayIn(tz);
  const defaults = useMemo(() => lastDays(HEATMAP_DEFAULT_DAYS[kind], tz), [kind, tz]);
  const days = { from: search.from ?? defaults.from, to: search.to ?? defaults.to };
  const range = rangeOfDays(days, tz);
  const query = useMemo(
    () => ({ param, kind, from: range?.from ?? 0, to: range?.to ?? 0 }),
    [param, kind, range?.from, range?.to],
  );
  // The default waits for the device's parameters, so a PV installation never loads import first.
  const heatmap = useHeatmap(range && (search.param || !latest.isPending) ? deviceId : null, query);
  const empty = heatmap.data !== undefined && valueDomain(heatmap.data.rows) === null;
  const unit = paramUnit(param);
  const title = t('analytics.heatmapOf', { param: paramName(t, param), device: device?.name ?? '' });
  const paramData = useMemo(
    () => paramSelectData(t, available.includes(param) ? available : [param, ...available]),
    [t, available, param],
  );

  return (
    <Stack gap="md">
      <Card withBorder padding="sm">
        <Group align="flex-start" wrap="wrap">
          <Select
            label={t('analytics.device')}
            data={devices.map((d) => ({ value: String(d.id), label: d.name }))}
            value={deviceId === null ? null : String(deviceId)}
            onChange={(v) => v && setSearch({ device: v, param: undefined })}
            allowDeselect={false}
            searchable
            w={{ base: '100%', xs: 220 }}
            data-testid="heatmap-device"
          />
          <Select
            label={t('analytics.parameter')}
            data={paramData}
            value={param}
            onChange={(v) => v && setSearch({ param: v })}
            allowDeselect={false}
            searchable
            w={{ base: '100%', xs: selectWidth(paramData.flatMap((g) => g.items.map((i) => i.label))) }}
            maw="100%"
            // A parameter's whole name ("Active energy import, sum of phases (kWh)") fits a phone's width
            // in a smaller type there.
            styles={{
              input: { fontSize: 'clamp(var(--mantine-font-size-xs), 3vw, var(--mantine-font-size-sm))' },
            }}
            data-testid="heatmap-param"
          />
          <DateField
            label={t('analytics.from')}
            value={days.from}
            onChange={(from) => setSearch({ from })}
            error={range ? undefined : t('val.dateRange')}
            maxDate={today}
            testId="heatmap-from"
          />
          <DateField
            label={t('analytics.to')}
            value={days.to}
            onChange={(to) => setSearch({ to })}
            maxDate={today}
            testId="heatmap-to"
          />
        </Group>
        <Stack gap={4} mt="sm">
          <Text size="sm" fw={500} id="heatmap-kind-label">
            {t('analytics.kind')}
          </Text>
          <SegmentedControl
            aria-labelledby="heatmap-kind-label"
            value={kind}
            onChange={(v) => setSearch({ kind: v as HeatmapKind, from: undefined, to: undefined })}
            data={HEATMAP_KIND_VALUES.map((k) => ({ value: k, label: t(`analytics.kind.${k}`) }))}
            data-testid="heatmap-kind"
            style={{ alignSelf: 'flex-start', maxWidth: '100%' }}
            // Four Polish names are wider than a phone: they wrap rather than run off the screen.
            styles={{ root: { flexWrap: 'wrap' } }}
          />
        </Stack>
      </Card>
      <Card withBorder padding="sm" data-testid="heatmap-card">
        <Text fw={600} mb="xs">
          {title}
          {unit ? ` (${unit})` : ''}
        </Text>
        {devices.length === 0 ? (
          <Alert color="gray">{t('analytics.noDevices')}</Alert>
        ) : !range ? (
          <Alert color="gray">{t('val.dateRange')}</Alert>
        ) : heatmap.isError ? (
          <ErrorState error={heatmap.error} onRetry={() => void heatmap.refetch()} />
        ) : heatmap.isPending ? (
          <Skeleton height={320} />
        ) : empty ? (
          <Text c="dimmed" ta="center" py="xl" data-testid="heatmap-empty">
            {t('common.empty')}
          </Text>
        ) : (
          <Suspense fallback={<Skeleton height={320} />}>
            <HeatmapChart
              key={`${kind}-${theme}`}
              heatmap={heatmap.data}
              theme={theme}
              userTz={tz}
              label={title}
            />
          </Suspense>
        )}
      </Card>
    </Stack>
  );
}
