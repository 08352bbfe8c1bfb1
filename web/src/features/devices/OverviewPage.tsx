import { Anchor, Badge, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { useDevice } from '../../api/devices/get-device.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { formatDay, formatInstant } from '../../lib/time.ts';
import { deviceTypeName } from '../../shared/devices/paramNames.ts';
import { detailsPath } from '../../shared/devices/paths.ts';
import { StatusBadge } from '../../shared/devices/StatusBadge.tsx';
import { RoutePending } from '../../shared/ui/RouteStates.tsx';

function when(v: string | number | null | undefined, tz: string, locale: string): string {
  if (v === null || v === undefined || v === '') return '—';
  // A calendar day (the billing start) is a date, not the instant of its UTC midnight.
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)) return formatDay(v, locale);
  const ms = typeof v === 'number' ? v : Date.parse(v);
  return Number.isFinite(ms) ? formatInstant(ms, tz, locale) : String(v);
}

function tariffName(v: unknown): string {
  if (v && typeof v === 'object' && 'name' in v) return String((v as { name: unknown }).name);
  return v === null || v === undefined ? '—' : String(v);
}

function Rows({ rows }: { rows: [MessageId, ReactNode][] }) {
  const { t } = useT();
  return (
    <Table variant="vertical" layout="fixed" withTableBorder>
      <Table.Tbody>
        {rows.map(([label, value]) => (
          <Table.Tr key={label}>
            <Table.Th w={{ base: 140, sm: 240 }}>{t(label)}</Table.Th>
            <Table.Td>{value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export default function OverviewPage() {
  const { t, locale } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const device = useDevice(id);
  const tz = displayTimeZone();
  if (device.isPending) return <RoutePending />;
  if (!device.data) return null;
  const d = device.data;
  const n = d.notifications;
  const yes = (b: boolean | undefined) => (
    <Badge variant="light" color={b ? 'green' : 'gray'}>
      {t(b ? 'overview.yes' : 'overview.no')}
    </Badge>
  );
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={1} fz="h2">
            {t('overview.title')}: {d.name}
          </Title>
          <StatusBadge status={d.status} />
        </Group>
        <Group gap="sm">
          <Anchor component={Link} to={detailsPath(d)}>
            {t('action.details')}
          </Anchor>
          <Anchor component={Link} to={`/edit-device/${id}`}>
            {t('action.edit')}
          </Anchor>
        </Group>
      </Group>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder padding="sm">
          <Rows
            rows={[
              ['overview.knownName', d.name],
              ['overview.commonName', d.friendlyName || '—'],
              ['overview.typeName', deviceTypeName(t, d.typeCode, d.typeName) || '—'],
              [
                'overview.mac',
                <Text key="mac" ff="monospace" size="sm">
                  {d.mac || '—'}
                </Text>,
              ],
              ['overview.modelName', d.modelName || d.model || '—'],
              ['overview.registered', when(d.registeredAt, tz, locale)],
              ['overview.modified', when(d.modifiedAt, tz, locale)],
              ['overview.billingStart', when(d.billingStart, tz, locale)],
              ['overview.billingMonths', d.billingMonths ?? '—'],
              ['overview.defaultTariff', tariffName(d.defaultTariff ?? d.tariff)],
              ['overview.location', d.location?.name ?? '—'],
            ]}
          />
        </Card>
        <Card withBorder padding="sm">
          <Title order={2} fz="md" mb="xs">
            {t('overview.notifications')}
          </Title>
          {n ? (
            <Rows
              rows={[
                ['overview.enabled', yes(n.enabled)],
                ['overview.voltageDrop', n.voltageDrop ?? '—'],
                ['overview.voltageRise', n.voltageRise ?? '—'],
                ['overview.totalConsumption', n.totalConsumption ?? '—'],
                ['overview.disableAtNight', yes(n.disableAtNight)],
                ['overview.interval', n.interval ?? '—'],
                ['overview.muteAll', yes(n.muteAll)],
              ]}
            />
          ) : (
            <Text c="dimmed">{t('common.none')}</Text>
          )}
        </Card>
      </SimpleGrid>
    </Stack>
  );
}
