import {
  Alert,
  Button,
  Card,
  Group,
  Loader,
  MultiSelect,
  Select,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useSearch } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import { useDevices } from '../../api/devices/get-devices.ts';
import { latestQueryOptions } from '../../api/telemetry/get-latest.ts';
import { type ReadingsQuery, useReadings } from '../../api/telemetry/get-readings.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { formatValue } from '../../charts/options.ts';
import { useT } from '../../i18n/i18n.ts';
import { formatInstant, parseUtcTimestamp } from '../../lib/time.ts';
import { useLongRange } from '../../ranges/RangeControl.tsx';
import {
  DEFAULT_LOG_PARAMS,
  defaultParamsFor,
  ownParams,
  paramOptions,
} from '../../shared/devices/logParams.ts';
import { paramLabel } from '../../shared/devices/paramNames.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';

const ROW = 30;

function LogTable({ deviceId, query }: { deviceId: string; query: ReadingsQuery }) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  const readings = useReadings(deviceId, query, true);
  const rows = useMemo(() => readings.data?.pages.flatMap((p) => p.items) ?? [], [readings.data]);
  const parent = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW,
    overscan: 20,
  });
  const items = v.getVirtualItems();
  const lastIndex = items[items.length - 1]?.index ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = readings;

  // Pages load as the reader nears the end.
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && lastIndex >= rows.length - 40) void fetchNextPage();
  }, [lastIndex, rows.length, hasNextPage, isFetchingNextPage, fetchNextPage]);

  if (readings.isPending) return <Loader m="md" aria-label={t('common.loading')} />;
  if (readings.isError) return <ErrorState error={readings.error} onRetry={() => void readings.refetch()} />;
  if (rows.length === 0)
    return (
      <Text c="dimmed" ta="center" py="lg">
        {t('common.empty')}
      </Text>
    );
  const padTop = items[0]?.start ?? 0;
  const padBottom = v.getTotalSize() - (items[items.length - 1]?.end ?? 0);
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed" data-testid="log-count">
        {t('log.rows', { count: rows.length })}
      </Text>
      <section
        ref={parent}
        style={{ maxHeight: '60vh', overflow: 'auto' }}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
        tabIndex={0}
        aria-label={t('log.title')}
      >
        <Table striped stickyHeader fz="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>
                {t('col.time')} ({tz})
              </Table.Th>
              {query.params.map((p) => (
                <Table.Th key={p} data-param={p}>
                  {paramLabel(t, p)}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {padTop > 0 && (
              <tr>
                <td style={{ height: padTop, padding: 0 }} colSpan={query.params.length + 1} />
              </tr>
            )}
            {items.map((item) => {
              const r = rows[item.index]!;
              return (
                <Table.Tr key={item.key} h={ROW}>
                  <Table.Td data-testid="log-time">
                    {formatInstant(parseUtcTimestamp(r.ts), tz, locale, 'second')}
                  </Table.Td>
                  {query.params.map((p) => (
                    <Table.Td key={p}>{formatValue(r.values[p] ?? null, '')}</Table.Td>
                  ))}
                </Table.Tr>
              );
            })}
            {padBottom > 0 && (
              <tr>
                <td style={{ height: padBottom, padding: 0 }} colSpan={query.params.length + 1} />
              </tr>
            )}
          </Table.Tbody>
        </Table>
      </section>
      {hasNextPage && (
        <Button variant="subtle" size="xs" onClick={() => void fetchNextPage()} loading={isFetchingNextPage}>
          {t('log.more')}
        </Button>
      )}
    </Stack>
  );
}

export default function DataLogPage() {
  const { t } = useT();
  const tz = displayTimeZone();
  const search = useSearch({ strict: false }) as { device?: string };
  const devices = useDevices();
  const [device, setDevice] = useState<string | null>(search.device ?? null);
  const [params, setParams] = useState<string[]>(DEFAULT_LOG_PARAMS);
  // Until the reader picks parameters, they follow the device: the ones it reports.
  const [paramsPicked, setParamsPicked] = useState(false);
  const latest = useQuery({ ...latestQueryOptions(device ?? ''), enabled: device !== null });
  const own = useMemo(() => ownParams(latest.data?.values), [latest.data]);
  useEffect(() => {
    if (!paramsPicked && own.length > 0) setParams(defaultParamsFor(own));
  }, [own, paramsPicked]);
  // Presets up to a year ending today, or two chosen days; each day ends at the next local midnight.
  const { range, problem, control } = useLongRange(tz, 'week');
  const [query, setQuery] = useState<{ device: string; q: ReadingsQuery } | null>(null);
  const [touched, setTouched] = useState(false);

  const errors = {
    device: touched && !device ? t('val.required') : undefined,
    params: touched && params.length === 0 ? t('val.param') : undefined,
    range:
      touched && range === null ? t(problem === 'reversed' ? 'val.dateOrder' : 'val.dateRange') : undefined,
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!device || params.length === 0 || range === null) return;
    setQuery({ device, q: { params, from: range.from, to: range.to } });
  };

  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {t('log.title')}
      </Title>
      <Card withBorder padding="sm" component="form" onSubmit={submit} noValidate>
        <Group align="flex-start" wrap="wrap">
          <Select
            label={t('log.device')}
            data={(devices.data ?? []).map((d) => ({ value: String(d.id), label: d.name }))}
            value={device}
            onChange={setDevice}
            searchable
            error={errors.device}
            w={{ base: '100%', xs: 220 }}
          />
          <MultiSelect
            label={t('log.params')}
            data={paramOptions(t, own, params)}
            value={params}
            onChange={(v) => {
              setParams(v);
              setParamsPicked(true);
            }}
            searchable
            clearable
            error={errors.params}
            w={{ base: '100%', sm: 360 }}
            maxValues={12}
          />
          <Stack gap={2}>
            <Text size="sm" fw={500}>
              {t('log.dateRange')}
            </Text>
            {control}
            {errors.range && (
              <Text size="xs" c="red" role="alert" data-testid="log-range-error">
                {errors.range}
              </Text>
            )}
          </Stack>
          <Button type="submit" mt={24}>
            {t('log.show')}
          </Button>
        </Group>
      </Card>
      <Card withBorder padding="sm">
        {query ? (
          <LogTable key={JSON.stringify(query)} deviceId={query.device} query={query.q} />
        ) : (
          <Alert variant="light" color="gray">
            {t('log.pick')}
          </Alert>
        )}
      </Card>
    </Stack>
  );
}
