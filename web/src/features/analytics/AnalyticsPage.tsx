/** /analytics (docs/spec.md §2): heatmaps, the energy consumption table and saved comparisons. */
import { Alert, Anchor, Loader, Stack, Tabs, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useDevices } from '../../api/devices/get-devices.ts';
import { useT } from '../../i18n/i18n.ts';
import { ExportButton } from '../../shared/export/ExportDialog.tsx';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ComparisonsSection } from './ComparisonsSection.tsx';
import { ConsumptionSection } from './ConsumptionSection.tsx';
import { HeatmapSection } from './HeatmapSection.tsx';
import { ANALYTICS_TABS, type AnalyticsTab } from './search.ts';
import { useAnalyticsSearch } from './useAnalyticsSearch.ts';

export default function AnalyticsPage() {
  const { t } = useT();
  const devices = useDevices();
  const [search, setSearch] = useAnalyticsSearch();
  const tab: AnalyticsTab = search.tab ?? 'heatmap';

  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {t('page.analytics')}
      </Title>
      {devices.isError && devices.data === undefined ? (
        <ErrorState error={devices.error} onRetry={() => void devices.refetch()} />
      ) : devices.isPending ? (
        <Loader role="status" aria-label={t('common.loading')} />
      ) : (
        <Tabs
          value={tab}
          onChange={(v) => v && setSearch({ tab: v as AnalyticsTab })}
          keepMounted={false}
          data-testid="analytics-tabs"
        >
          <Tabs.List mb="md">
            {ANALYTICS_TABS.map((id) => (
              <Tabs.Tab key={id} value={id} data-testid={`tab-${id}`}>
                {t(`analytics.tab.${id}`)}
              </Tabs.Tab>
            ))}
          </Tabs.List>
          {devices.data.length === 0 && (
            <Alert color="gray" mb="md" data-testid="analytics-no-devices">
              {t('analytics.noDevices')}{' '}
              <Anchor component={Link} to="/device/add" data-testid="analytics-add-device">
                {t('add.title')}
              </Anchor>
            </Alert>
          )}
          <Tabs.Panel value="heatmap">
            <HeatmapSection devices={devices.data} />
          </Tabs.Panel>
          <Tabs.Panel value="consumption">
            <ConsumptionSection
              devices={devices.data}
              exportSlot={(ids) => <ExportButton key={ids.join(',')} deviceIds={ids} />}
            />
          </Tabs.Panel>
          <Tabs.Panel value="comparisons">
            <ComparisonsSection
              devices={devices.data}
              exportSlot={(ids, params) => (
                <ExportButton key={`${ids.join(',')}|${params.join(',')}`} deviceIds={ids} params={params} />
              )}
            />
          </Tabs.Panel>
        </Tabs>
      )}
    </Stack>
  );
}
