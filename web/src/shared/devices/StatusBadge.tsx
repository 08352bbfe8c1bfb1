import type { Device } from '@kilowatch/core';
import { Badge } from '@mantine/core';
import { useT } from '../../i18n/i18n.ts';

// Filled badges with auto-contrast text keep AA contrast in both themes.
const COLORS = { online: 'teal.9', offline: 'gray.7', 'weak-signal': 'yellow.5' } as const;

export function StatusBadge({ status }: { status: Device['status'] }) {
  const { t } = useT();
  return (
    <Badge color={COLORS[status]} variant="filled" data-status={status}>
      {t(`status.${status}`)}
    </Badge>
  );
}
