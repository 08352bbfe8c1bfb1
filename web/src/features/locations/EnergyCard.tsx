/**
 * A location's Energy view (docs/api.md §Energy flows): for today, this month or this year so far, where
 * the energy came from and went, the home's consumption by source, self-sufficiency and self-consumption,
 * what no sub-meter measured, and what the import cost at the location's tariff.
 */
import type { Device, Location } from '@kilowatch/core';
import {
  Alert,
  Card,
  Group,
  SegmentedControl,
  SimpleGrid,
  Skeleton,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useFlows } from '../../api/locations/get-flows.ts';
import { formatValue } from '../../charts/options.ts';
import { useChartTheme } from '../../charts/useChartTheme.ts';
import { useT } from '../../i18n/i18n.ts';
import { intlLocale } from '../../lib/time.ts';
import { ENERGY_PERIODS, type EnergyPeriod, periodRange } from '../../shared/flows/periods.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { untrackedShare } from './flowsView.ts';

const FlowCharts = lazy(() => import('./FlowCharts.tsx'));

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} fz="lg" data-testid={testId}>
        {value}
      </Text>
    </div>
  );
}

export function EnergyCard({ location, devices }: { location: Location; devices: readonly Device[] }) {
  const { t, locale } = useT();
  const theme = useChartTheme();
  const [period, setPeriod] = useState<EnergyPeriod>('today');
  // The period so far, fixed when chosen: the answer is asked again when the period changes.
  const range = useMemo(
    () => periodRange(period, Date.now(), location.timezone),
    [period, location.timezone],
  );
  const flows = useFlows(String(location.id), range);
  const hasGrid = devices.some((d) => d.role === 'grid');
  const percent = (v: number | null) =>
    v === null
      ? '–'
      : new Intl.NumberFormat(intlLocale(locale), { style: 'percent', maximumFractionDigits: 0 }).format(v);
  const money = (v: number | null, currency: string | null) =>
    v === null || currency === null
      ? t('flows.noTariff')
      : new Intl.NumberFormat(intlLocale(locale), { style: 'currency', currency }).format(v);
  const totals = flows.data?.totals;
  return (
    <Card withBorder data-testid="location-energy">
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap">
          <Title order={2} fz="h4">
            {t('flows.title')}
          </Title>
          <SegmentedControl
            size="xs"
            value={period}
            onChange={(v) => setPeriod(v as EnergyPeriod)}
            data={ENERGY_PERIODS.map((p) => ({ value: p, label: t(`flows.period.${p}`) }))}
            data-testid="flows-period"
          />
        </Group>
        {!hasGrid && (
          <Alert color="gray" data-testid="flows-no-grid">
            {t('flows.noGrid')}
          </Alert>
        )}
        {flows.isError && flows.data === undefined ? (
          <ErrorState error={flows.error} onRetry={() => void flows.refetch()} />
        ) : !totals || !flows.data ? (
          <Skeleton height={320} />
        ) : (
          <>
            {totals.inconsistent && (
              <Alert color="yellow" data-testid="flows-inconsistent">
                {t('flows.inconsistent')}
              </Alert>
            )}
            <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="sm">
              <Figure
                label={t('flows.consumption')}
                value={formatValue(totals.consumption, 'kWh')}
                testId="flows-consumption"
              />
              <Figure
                label={t('flows.production')}
                value={formatValue(totals.production, 'kWh')}
                testId="flows-production"
              />
              <Figure
                label={t('flows.selfSufficiency')}
                value={percent(totals.selfSufficiency)}
                testId="flows-self-sufficiency"
              />
              <Figure
                label={t('flows.selfConsumption')}
                value={percent(totals.selfConsumption)}
                testId="flows-self-consumption"
              />
              <Figure
                label={t('flows.untracked')}
                value={percent(untrackedShare(totals))}
                testId="flows-untracked"
              />
              <Figure
                label={t('flows.importCost')}
                value={money(totals.cost.import, totals.cost.currency)}
                testId="flows-cost"
              />
            </SimpleGrid>
            <Suspense fallback={<Skeleton height={480} />}>
              <FlowCharts flows={flows.data} theme={theme} />
            </Suspense>
          </>
        )}
      </Stack>
    </Card>
  );
}
