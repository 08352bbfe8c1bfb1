import { Badge } from '@mantine/core';
import type { Device } from '../../api/schemas.ts';
import { useT } from '../../i18n/i18n.ts';

const COLORS = { online: 'green', offline: 'gray', 'weak-signal': 'yellow' } as const;

export function StatusBadge({ status }: { status: Device['status'] }) {
  const { t } = useT();
  return (
    <Badge color={COLORS[status]} variant="light" data-status={status}>
      {t(`status.${status}`)}
    </Badge>
  );
}
