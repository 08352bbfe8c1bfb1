/**
 * Voltage quality on a device page (docs/domain.md §Limits, voltage quality): per phase, the share of
 * 10-minute mean voltages inside the user's warning and critical bands and inside EN 50160's ±10 %,
 * for the page's period, with the limits in volts.
 */

import { DAY_MS, VOLTAGE_QUALITY_MAX_MS } from '@kilowatch/core';
import { Badge, Card, Group, Skeleton, Table, Text, Title, useComputedColorScheme } from '@mantine/core';
import { qualityRangeFits, useVoltageQuality } from '../../api/telemetry/get-voltage-quality.ts';
import { useT } from '../../i18n/i18n.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { bandVolts, EN50160_PERCENT, formatShare } from './quality.ts';

export interface VoltageQualityPanelProps {
  deviceId: string;
  range: { from: number; to: number };
}

function BandHeader({ label, percent }: { label: string; percent: number }) {
  const { t } = useT();
  const { low, high } = bandVolts(percent);
  return (
    <Table.Th>
      {label}
      <Text size="xs" c="dimmed" fw={400}>
        {t('export.quality.band', { low, high })}
      </Text>
    </Table.Th>
  );
}

export function VoltageQualityPanel({ deviceId, range }: VoltageQualityPanelProps) {
  const { t, locale } = useT();
  const dark = useComputedColorScheme('light') === 'dark';
  // Darker than Mantine's badge shades, so the verdict meets WCAG AA on striped rows in both themes.
  const verdict = (met: boolean) => (met ? (dark ? '#8ce99a' : '#1e6b34') : dark ? '#ffa8a8' : '#a61e1e');
  const quality = useVoltageQuality(deviceId, range);
  const data = quality.data;
  const phases = data?.phases ?? [];
  const empty = data !== undefined && phases.every((p) => p.samples === 0);

  return (
    <Card withBorder padding="sm" data-testid="voltage-quality" aria-labelledby="voltage-quality-title">
      <Title order={2} fz="md" id="voltage-quality-title">
        {t('export.quality.title')}
      </Title>
      <Text size="xs" c="dimmed" mb="xs">
        {t('export.quality.hint')}
      </Text>
      {!qualityRangeFits(range) ? (
        <Text c="dimmed" ta="center" py="md" data-testid="voltage-quality-too-long">
          {t('export.quality.tooLong', { days: Math.floor(VOLTAGE_QUALITY_MAX_MS / DAY_MS) })}
        </Text>
      ) : quality.isPending ? (
        <Skeleton h={120} role="status" aria-label={t('common.loading')} />
      ) : quality.isError ? (
        <ErrorState error={quality.error} onRetry={() => void quality.refetch()} />
      ) : empty || !data ? (
        <Text c="dimmed" ta="center" py="md" data-testid="voltage-quality-empty">
          {t('export.quality.noData')}
        </Text>
      ) : (
        <section
          style={{ overflowX: 'auto' }}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
          tabIndex={0}
          aria-labelledby="voltage-quality-title"
        >
          <Table fz="sm" striped miw={560}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('export.quality.phase')}</Table.Th>
                <Table.Th>{t('export.quality.samples')}</Table.Th>
                <BandHeader
                  label={t('export.quality.warning', { percent: data.limits.warning })}
                  percent={data.limits.warning}
                />
                <BandHeader
                  label={t('export.quality.critical', { percent: data.limits.critical })}
                  percent={data.limits.critical}
                />
                <BandHeader label={t('export.quality.en50160')} percent={EN50160_PERCENT} />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {phases.map((p) => (
                <Table.Tr key={p.phase} data-testid="quality-phase" data-phase={p.phase}>
                  <Table.Td>L{p.phase}</Table.Td>
                  <Table.Td data-testid="quality-samples">{p.samples.toLocaleString(locale)}</Table.Td>
                  <Table.Td data-testid="quality-warning">{formatShare(p.withinWarning, locale)}</Table.Td>
                  <Table.Td data-testid="quality-critical">{formatShare(p.withinCritical, locale)}</Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <span data-testid="quality-en50160">{formatShare(p.withinEn50160, locale)}</span>
                      {p.en50160Met !== null && (
                        <Badge
                          size="sm"
                          variant="outline"
                          color={verdict(p.en50160Met)}
                          data-testid="quality-met"
                        >
                          {p.en50160Met ? t('export.quality.met') : t('export.quality.notMet')}
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </section>
      )}
    </Card>
  );
}
