/**
 * Today so far at each location with a grid meter: its home consumption, self-sufficiency and import
 * cost (docs/api.md §Energy flows), each tile opening the location's Energy view.
 */
import type { Device, Location } from '@kilowatch/core';
import { Anchor, Card, Group, SimpleGrid, Skeleton, Text } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useMemo } from 'react';
import { useFlows } from '../../api/locations/get-flows.ts';
import { useLocations } from '../../api/locations/get-locations.ts';
import { formatValue } from '../../charts/options.ts';
import { useT } from '../../i18n/i18n.ts';
import { intlLocale } from '../../lib/time.ts';
import { periodRange } from '../../shared/flows/periods.ts';

function LocationToday({ location }: { location: Location }) {
  const { t, locale } = useT();
  const range = useMemo(() => periodRange('today', Date.now(), location.timezone), [location.timezone]);
  const flows = useFlows(String(location.id), range);
  const totals = flows.data?.totals;
  const format = new Intl.NumberFormat(intlLocale(locale), { style: 'percent', maximumFractionDigits: 0 });
  const cost =
    totals?.cost.import == null || totals.cost.currency === null
      ? t('flows.noTariff')
      : new Intl.NumberFormat(intlLocale(locale), {
          style: 'currency',
          currency: totals.cost.currency,
        }).format(totals.cost.import);
  return (
    <Card withBorder padding="sm" data-testid="today-location">
      <Anchor component={Link} to={`/location/view/${location.id}`} fw={600} size="sm">
        {location.name}
      </Anchor>
      {!totals ? (
        <Skeleton height={36} mt={6} />
      ) : (
        <Group gap="lg" mt={4} wrap="wrap">
          <div>
            <Text size="xs" c="dimmed">
              {t('flows.consumption')}
            </Text>
            <Text fw={700} data-testid="today-consumption">
              {formatValue(totals.consumption, 'kWh')}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              {t('flows.selfSufficiency')}
            </Text>
            <Text fw={700} data-testid="today-self-sufficiency">
              {totals.selfSufficiency === null ? '–' : format.format(totals.selfSufficiency)}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              {t('flows.importCost')}
            </Text>
            <Text fw={700} data-testid="today-cost">
              {cost}
            </Text>
          </div>
        </Group>
      )}
    </Card>
  );
}

export function TodayEnergy({ devices }: { devices: readonly Device[] }) {
  const locations = useLocations();
  const withGrid = useMemo(() => {
    const ids = new Set(devices.filter((d) => d.role === 'grid' && d.location).map((d) => d.location!.id));
    return (locations.data ?? []).filter((l) => ids.has(l.id));
  }, [devices, locations.data]);
  if (withGrid.length === 0) return null;
  return (
    <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="sm" data-testid="today-energy">
      {withGrid.map((l) => (
        <LocationToday key={l.id} location={l} />
      ))}
    </SimpleGrid>
  );
}
