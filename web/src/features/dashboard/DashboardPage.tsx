import type { Device } from '@kilowatch/core';
import {
  Anchor,
  Button,
  Card,
  CloseButton,
  Group,
  Menu,
  Skeleton,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { Link } from '@tanstack/react-router';
import { type KeyboardEvent, useMemo, useState } from 'react';
import { useDevices } from '../../api/devices/get-devices.ts';
import { useLiveDevices } from '../../hub/live.tsx';
import { useT } from '../../i18n/i18n.ts';
import { deviceTypeName, ownModel } from '../../shared/devices/paramNames.ts';
import { detailsPath } from '../../shared/devices/paths.ts';
import { StatusBadge } from '../../shared/devices/StatusBadge.tsx';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { effectiveQuery, searchDevices } from './deviceSearch.ts';
import { TodayEnergy } from './TodayEnergy.tsx';

function DeviceActions({ device }: { device: Device }) {
  const { t } = useT();
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <Button size="compact-xs" variant="subtle" aria-label={`${t('col.actions')}: ${device.name}`}>
          ⋯
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item component={Link} to={detailsPath(device)}>
          {t('action.details')}
        </Menu.Item>
        <Menu.Item component={Link} to={`/device/overview/${device.id}`}>
          {t('action.overview')}
        </Menu.Item>
        <Menu.Item component={Link} to={`/edit-device/${device.id}`}>
          {t('action.edit')}
        </Menu.Item>
        <Menu.Item component={Link} to="/device/data-log" search={{ device: String(device.id) } as never}>
          {t('action.dataLog')}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

export default function DashboardPage() {
  const { t } = useT();
  const devices = useDevices();
  const [input, setInput] = useState('');
  const [submitted, setSubmitted] = useState('');
  const [debounced] = useDebouncedValue(input, 200);
  // Searches while typing (debounced) and at once on Enter; an emptied box clears the search.
  const query = input === '' ? '' : effectiveQuery(submitted === input ? input : debounced);
  const list = useMemo(() => searchDevices(devices.data ?? [], query), [devices.data, query]);
  useLiveDevices(useMemo(() => (devices.data ?? []).map((d) => d.id), [devices.data]));

  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter') setSubmitted(input);
    if (e.key === 'Escape') setInput('');
  };

  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Stack gap={0}>
          <Title order={1} fz="h2">
            {t('dashboard.title')}
          </Title>
          {devices.data && (
            <Text size="sm" c="dimmed" data-testid="device-count">
              {t('dashboard.count', { count: list.length })}
            </Text>
          )}
        </Stack>
        <Group gap="sm" wrap="wrap" w={{ base: '100%', xs: 'auto' }}>
          <TextInput
            type="search"
            placeholder={t('dashboard.search')}
            aria-label={t('dashboard.search')}
            description={input.length > 0 && input.trim().length < 2 ? t('dashboard.searchHint') : undefined}
            value={input}
            onChange={(e) => setInput(e.currentTarget.value)}
            onKeyDown={onKey}
            w={{ base: '100%', xs: 280 }}
            data-testid="device-search"
            rightSection={
              input ? (
                <CloseButton aria-label={t('common.close')} onClick={() => setInput('')} size="sm" />
              ) : null
            }
          />
          <Button component={Link} to="/device/add" data-testid="add-device">
            {t('add.open')}
          </Button>
        </Group>
      </Group>
      {devices.data && <TodayEnergy devices={devices.data} />}
      <Card withBorder padding={0}>
        {devices.isPending ? (
          <Stack p="md" gap="sm" role="status" aria-busy="true" aria-label={t('common.loading')}>
            {[0, 1, 2, 3].map((i) => (
              <Skeleton key={i} height={28} />
            ))}
          </Stack>
        ) : devices.isError && devices.data === undefined ? (
          <ErrorState error={devices.error} onRetry={() => void devices.refetch()} />
        ) : list.length === 0 ? (
          <Text c="dimmed" ta="center" py="xl" data-testid="devices-empty">
            {query ? t('dashboard.noMatch', { query }) : t('dashboard.empty')}
          </Text>
        ) : (
          <Table.ScrollContainer minWidth={560}>
            <Table highlightOnHover verticalSpacing="sm" data-testid="device-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('col.name')}</Table.Th>
                  <Table.Th>{t('col.model')}</Table.Th>
                  <Table.Th>{t('col.status')}</Table.Th>
                  <Table.Th>{t('col.actions')}</Table.Th>
                  <Table.Th>{t('col.location')}</Table.Th>
                  <Table.Th>{t('col.tariff')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((d) => (
                  <Table.Tr key={d.id} data-testid="device-row" data-type={d.typeCode}>
                    <Table.Td>
                      <Anchor component={Link} to={detailsPath(d)} fw={600}>
                        {d.name}
                      </Anchor>
                      {d.friendlyName && d.friendlyName !== d.name && (
                        <Text size="xs" c="dimmed">
                          {d.friendlyName}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{ownModel(d) || deviceTypeName(t, d.typeCode, d.typeName)}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={d.status} />
                    </Table.Td>
                    <Table.Td>
                      <DeviceActions device={d} />
                    </Table.Td>
                    <Table.Td>{d.location?.name ?? '—'}</Table.Td>
                    <Table.Td>{d.tariff?.name ?? '—'}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Card>
    </Stack>
  );
}
