import type { DeviceOverview } from '@kilowatch/core';
import {
  Alert,
  Anchor,
  Button,
  Card,
  Group,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { Link, useParams, useRouterState } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { useDevice } from '../../api/devices/get-device.ts';
import { useLimits } from '../../api/devices/limits.ts';
import { useLocation } from '../../api/locations/get-location.ts';
import { useLatest } from '../../api/telemetry/get-latest.ts';
import { useSeries } from '../../api/telemetry/get-series.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { formatValue } from '../../charts/options.ts';
import { usePlotPoints } from '../../charts/plotPoints.ts';
import { useLiveDevices } from '../../hub/live.tsx';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { dayjs, formatInstant } from '../../lib/time.ts';
import { CustomRangeInput, DayInput, RangePresets, todayIn } from '../../ranges/RangeControl.tsx';
import {
  billingPeriods,
  CHART_INTERVAL_CHOICES,
  type ChartIntervalChoice,
  type LongPreset,
  longRange,
  rangeFor,
  seriesInterval,
  type TimeRange,
  wantsBands,
} from '../../ranges/ranges.ts';
import { deviceTypeName, paramName } from '../../shared/devices/paramNames.ts';
import { StatusBadge } from '../../shared/devices/StatusBadge.tsx';
import { ExportButton } from '../../shared/export/ExportDialog.tsx';
import { RoutePending } from '../../shared/ui/RouteStates.tsx';
import { selectWidth } from '../../shared/ui/selectWidth.ts';
import {
  type ChartGroup,
  chartGroups,
  type DetailsKind,
  hasEnergy,
  hasPhaseView,
  kindFromPath,
  type PhaseView,
} from './chartGroups.ts';
import { DeleteDevice, LimitsForm, MeterValueForm } from './DeviceForms.tsx';
import { deviceSubtitle, withPhaseTotals } from './deviceSummary.ts';
import { EnergySection } from './EnergyPanel.tsx';
import { SeriesChart } from './SeriesChart.tsx';
import { VoltageQualityPanel } from './VoltageQualityPanel.tsx';

const NOMINAL_VOLTAGE = 230;

/** The chart periods: presets up to a year ending today, a custom range, and the billing period. */
type DevicePreset = LongPreset | 'billing';
const DEVICE_PRESETS: readonly LongPreset[] = ['day', 'week', 'month', 'quarter', 'year', 'custom'];

const LIVE_PARAMS: Record<DetailsKind, { param: string; label: MessageId }[]> = {
  'three-phase': [
    { param: 'vave1', label: 'details.voltage' },
    { param: 'iave1', label: 'details.current' },
    { param: 'power3phases', label: 'details.power' },
    { param: 'frq1', label: 'details.frequency' },
  ],
  'single-phase': [
    { param: 'vave1', label: 'details.voltage' },
    { param: 'iave1', label: 'details.current' },
    { param: 'pave1', label: 'details.power' },
    { param: 'pfave1', label: 'details.powerFactor' },
  ],
  solar: [
    { param: 'power3phases', label: 'details.production' },
    { param: 'vdc1', label: 'details.dcVoltage' },
    { param: 'idc1', label: 'details.dcCurrent' },
    { param: 'frq1', label: 'details.frequency' },
  ],
  thermostat: [
    { param: 'tempmain', label: 'details.temperature' },
    { param: 'tempset', label: 'details.setPoint' },
    { param: 'rel1', label: 'details.relay' },
  ],
  energy: [
    { param: 'power3phases', label: 'details.power' },
    { param: 'energy3phases_import', label: 'details.import' },
    { param: 'energy3phases_export', label: 'details.export' },
  ],
};

function LiveValues({ deviceId, kind, tz }: { deviceId: string; kind: DetailsKind; tz: string }) {
  const { t, locale } = useT();
  const latest = useLatest(deviceId);
  const items = LIVE_PARAMS[kind];
  const values = useMemo(() => withPhaseTotals(latest.data?.values), [latest.data]);
  const ts = latest.data?.ts;
  const when = ts === null || ts === undefined ? null : typeof ts === 'number' ? ts : Date.parse(ts);
  return (
    <Card withBorder padding="sm" data-testid="live-values">
      <Group justify="space-between" mb={4}>
        <Title order={2} fz="sm">
          {t('details.live')}
        </Title>
        <Text size="xs" c="dimmed" data-testid="live-time">
          {when
            ? t('details.lastReading', { time: formatInstant(when, tz, locale, 'second') })
            : t('details.noReading')}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 2, sm: items.length }}>
        {items.map((i) => {
          const v = values[i.param];
          const unit = i.param === 'rel1' ? '' : (UNITS[i.param] ?? '');
          return (
            <div key={i.param}>
              <Text size="xs" c="dimmed">
                {i.param === 'rel1' ? t(i.label) : paramName(t, i.param)}
              </Text>
              <Text fw={700} fz="lg" data-testid={`live-${i.param}`} aria-live="polite">
                {i.param === 'rel1' && v !== undefined && v !== null
                  ? t(v ? 'details.relayOn' : 'details.relayOff')
                  : formatValue(v ?? null, unit)}
              </Text>
            </div>
          );
        })}
      </SimpleGrid>
    </Card>
  );
}

const UNITS: Record<string, string> = {
  vave1: 'V',
  iave1: 'A',
  pave1: 'W',
  pfave1: '',
  power3phases: 'W',
  frq1: 'Hz',
  vdc1: 'V',
  idc1: 'A',
  tempmain: '°C',
  tempset: '°C',
  energy3phases_import: 'kWh',
  energy3phases_export: 'kWh',
};

function toMs(v: string | number | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  const ms = typeof v === 'number' ? v : Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

function Toolbar(props: {
  kind: DetailsKind;
  device: DeviceOverview;
  tz: string;
  preset: DevicePreset;
  setPreset: (p: DevicePreset) => void;
  startDate: string;
  setStartDate: (s: string) => void;
  custom: [string | null, string | null];
  setCustom: (c: [string | null, string | null]) => void;
  billing: TimeRange[];
  /** The zone the billing periods are days of. */
  billingTz: string;
  billingIndex: string;
  setBillingIndex: (s: string) => void;
  interval: ChartIntervalChoice;
  setInterval: (i: ChartIntervalChoice) => void;
  view: PhaseView;
  setView: (v: PhaseView) => void;
  table: boolean;
  setTable: (b: boolean) => void;
}) {
  const { t, locale } = useT();
  const presets: DevicePreset[] = [
    ...DEVICE_PRESETS,
    ...(props.billing.length ? (['billing'] as const) : []),
  ];
  const today = todayIn(props.tz);
  const billingChoices = props.billing.map((p, i) => ({
    value: String(i),
    label: `${formatInstant(p.from, props.billingTz, locale, 'date')} – ${formatInstant(p.to - 1, props.billingTz, locale, 'date')}`,
  }));
  const intervalChoices = CHART_INTERVAL_CHOICES.map((i) => ({ value: i, label: t(`details.int.${i}`) }));
  return (
    <Card withBorder padding="sm">
      <Group gap="md" align="flex-end" wrap="wrap">
        <Stack gap={2}>
          <Text size="xs" fw={500} id="range-label">
            {t('details.range')}
          </Text>
          <RangePresets
            labelledBy="range-label"
            value={props.preset}
            onChange={props.setPreset}
            presets={presets.map((p) => ({ value: p, label: t(`details.range.${p}`) }))}
          />
        </Stack>
        {props.preset === 'day' && (
          <DayInput
            label={t('details.startDate')}
            value={props.startDate}
            onChange={props.setStartDate}
            today={today}
            testId="range-day"
          />
        )}
        {props.preset === 'custom' && (
          <Stack gap={2}>
            <Text size="xs" fw={500}>
              {t('range.customLabel')}
            </Text>
            <CustomRangeInput value={props.custom} onChange={props.setCustom} today={today} />
          </Stack>
        )}
        {props.preset === 'billing' && (
          <Select
            size="xs"
            w={selectWidth(billingChoices.map((c) => c.label))}
            label={t('details.billingPeriod')}
            data-testid="billing-period"
            value={props.billingIndex}
            onChange={(v) => v && props.setBillingIndex(v)}
            allowDeselect={false}
            data={billingChoices}
          />
        )}
        <Select
          size="xs"
          w={selectWidth(intervalChoices.map((c) => c.label))}
          label={t('details.interval')}
          value={props.interval}
          onChange={(v) => v && props.setInterval(v as ChartIntervalChoice)}
          allowDeselect={false}
          data={intervalChoices}
          data-testid="interval-select"
        />
        {hasPhaseView(props.kind) && (
          <Stack gap={2}>
            <Text size="xs" fw={500} id="phase-view-label">
              {t('details.view')}
            </Text>
            <SegmentedControl
              size="xs"
              aria-labelledby="phase-view-label"
              value={props.view}
              onChange={(v) => props.setView(v as PhaseView)}
              data={[
                { value: 'phase', label: t('details.view.perPhase') },
                { value: 'sum', label: t('details.view.summed') },
              ]}
            />
          </Stack>
        )}
        <SegmentedControl
          size="xs"
          aria-label={t('details.view')}
          value={props.table ? 'table' : 'chart'}
          onChange={(v) => props.setTable(v === 'table')}
          data={[
            { value: 'chart', label: t('details.view.chart') },
            { value: 'table', label: t('details.view.table') },
          ]}
        />
      </Group>
      <Text size="xs" c="dimmed" mt={6}>
        {t('details.zoomHint')} · {props.tz}
      </Text>
    </Card>
  );
}

function Charts(props: {
  deviceId: string;
  groups: ChartGroup[];
  range: TimeRange;
  interval: ChartIntervalChoice;
  live: boolean;
  tz: string;
  table: boolean;
}) {
  const limits = useLimits(props.deviceId);
  const params = useMemo(() => [...new Set(props.groups.flatMap((g) => g.params))], [props.groups]);
  // The charts' width (the grid's: a chart is at most that wide) sizes the answer to the screen; the
  // table shows every bucket, and so do ranges of a week or less (their buckets, of a minute or more, are
  // close to the screen's count already).
  const plot = usePlotPoints<HTMLDivElement>();
  const series = useSeries(
    props.deviceId,
    {
      params,
      from: props.range.from,
      to: props.range.to,
      interval: seriesInterval(props.range, props.interval),
      stats: ['avg', 'min', 'max'],
      ...(plot.points !== undefined && !props.table && wantsBands(props.range)
        ? { points: plot.points }
        : {}),
      live: props.live,
    },
    plot.measured,
  );
  // Another range's data is never shown as this one's: each chart shows its loading cue meanwhile.
  const loading = series.isPending || series.isPlaceholderData;
  const limitLines = useMemo(
    () =>
      limits.data
        ? { nominal: NOMINAL_VOLTAGE, warning: limits.data.warning, critical: limits.data.critical }
        : undefined,
    [limits.data],
  );
  return (
    <SimpleGrid ref={plot.ref} cols={{ base: 1, lg: props.groups.length > 1 ? 2 : 1 }}>
      {props.groups.map((g, i) => (
        // An odd chart out takes the whole row rather than half of it beside nothing.
        <div
          key={`${g.id}-${g.params.join()}`}
          style={i === props.groups.length - 1 && i % 2 === 0 ? { gridColumn: '1 / -1' } : undefined}
        >
          <SeriesChart
            group={g}
            data={series.data}
            isPending={loading}
            error={series.error}
            refetch={() => void series.refetch()}
            tz={props.tz}
            limits={g.voltageLimits ? limitLines : undefined}
            table={props.table}
            syncKey={`device-${props.deviceId}`}
          />
        </div>
      ))}
    </SimpleGrid>
  );
}

export default function DeviceDetailsPage() {
  const { t } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const kind = kindFromPath(pathname);
  const device = useDevice(id);
  const tz = displayTimeZone();
  const [preset, setPreset] = useState<DevicePreset>('day');
  const [startDate, setStartDate] = useState(() => dayjs().tz(tz).format('YYYY-MM-DD'));
  const [custom, setCustom] = useState<[string | null, string | null]>([null, null]);
  const [billingIndex, setBillingIndex] = useState('0');
  const [interval, setInterval] = useState<ChartIntervalChoice>('auto');
  const [view, setView] = useState<PhaseView>('phase');
  const [table, setTable] = useState(false);
  useLiveDevices([id]);

  // Billing periods are days of the device location's zone (docs/domain.md §Time, §Billing), and are
  // named in it; the user's zone while the location is unknown.
  const locationId = device.data?.location?.id;
  const location = useLocation(String(locationId ?? ''), locationId !== undefined);
  const billingTz = location.data?.timezone ?? tz;
  const billing = useMemo(() => {
    const raw = device.data?.billingStart;
    // A calendar day (as the API keeps it) is that day wherever the location is, not its UTC midnight.
    const start = typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(raw) ? raw : toMs(raw);
    return start === null
      ? []
      : billingPeriods(start, device.data?.billingMonths ?? 1, Date.now(), billingTz);
  }, [device.data?.billingStart, device.data?.billingMonths, billingTz]);

  const range = useMemo<TimeRange | null>(() => {
    if (preset === 'billing') return billing[Number(billingIndex)] ?? rangeFor('month', Date.now(), tz);
    return longRange(preset, Date.now(), tz, custom, preset === 'day' ? startDate : undefined);
  }, [preset, billing, billingIndex, startDate, custom, tz]);
  const now = Date.now();
  const live = range !== null && range.from <= now && now < range.to;
  const groups = useMemo(() => chartGroups(kind, hasPhaseView(kind) ? view : 'phase'), [kind, view]);
  // Voltage bands only for a device that reports a voltage (not a thermostat or a plain energy meter).
  const latest = useLatest(id);
  const hasVoltage =
    kind === 'three-phase' ||
    kind === 'single-phase' ||
    Object.keys(latest.data?.values ?? {}).some((p) => /^vave\d$/.test(p));

  if (device.isPending) return <RoutePending />;
  if (device.isError || !device.data) return null;
  const d = device.data;

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-start" wrap="wrap">
        <Stack gap={2}>
          <Group gap="xs">
            <Title order={1} fz="h2" data-testid="device-title">
              {d.name}
            </Title>
            <StatusBadge status={d.status} />
          </Group>
          <Text size="sm" c="dimmed" data-testid="device-subtitle">
            {deviceSubtitle(deviceTypeName(t, d.typeCode, d.typeName), d).join(' · ')}
          </Text>
        </Stack>
        <Group gap="xs">
          <Anchor component={Link} to={`/device/overview/${id}`} size="sm">
            {t('action.overview')}
          </Anchor>
          <Anchor component={Link} to={`/edit-device/${id}`} size="sm">
            {t('action.edit')}
          </Anchor>
          <Anchor component={Link} to="/device/data-log" search={{ device: id } as never} size="sm">
            {t('action.dataLog')}
          </Anchor>
          <Anchor component={Link} to={`/device/import/${id}`} size="sm" data-testid="device-import">
            {t('imports.entry')}
          </Anchor>
          <ExportButton deviceIds={[Number(id)]} />
        </Group>
      </Group>
      <LiveValues deviceId={id} kind={kind} tz={tz} />
      <Toolbar
        kind={kind}
        device={d}
        tz={tz}
        preset={preset}
        setPreset={setPreset}
        startDate={startDate}
        setStartDate={setStartDate}
        custom={custom}
        setCustom={setCustom}
        billing={billing}
        billingTz={billingTz}
        billingIndex={billingIndex}
        setBillingIndex={setBillingIndex}
        interval={interval}
        setInterval={setInterval}
        view={view}
        setView={setView}
        table={table}
        setTable={setTable}
      />
      {range === null ? (
        <Alert color="gray" data-testid="range-incomplete">
          {t('range.customLabel')}
        </Alert>
      ) : (
        <Charts
          deviceId={id}
          groups={groups}
          range={range}
          interval={interval}
          live={live}
          tz={tz}
          table={table}
        />
      )}
      {range && (kind === 'three-phase' || kind === 'single-phase') && (
        <VoltageQualityPanel deviceId={id} range={range} />
      )}
      {range && hasEnergy(kind) && (
        <EnergySection
          deviceId={id}
          range={range}
          interval={interval}
          tz={tz}
          table={table}
          syncKey={`device-${id}`}
        />
      )}
      <Title order={2} fz="lg" mt="md">
        {t('details.settings')}
      </Title>
      {/* A lone settings card takes the whole row rather than half of it beside nothing. */}
      <SimpleGrid cols={{ base: 1, md: hasVoltage && hasEnergy(kind) ? 2 : 1 }}>
        {hasVoltage && <LimitsForm deviceId={id} />}
        {hasEnergy(kind) && <MeterValueForm deviceId={id} />}
      </SimpleGrid>
      <Group>
        <DeleteDevice deviceId={id} name={d.name} />
        <Button component={Link} to="/dashboard" variant="subtle" size="xs">
          {t('common.back')}
        </Button>
      </Group>
    </Stack>
  );
}
