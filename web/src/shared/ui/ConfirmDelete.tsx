import { Button, type ButtonProps, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useT } from '../../i18n/i18n.ts';

/** A delete (or revoke) button that asks first; `onConfirm` resolves true when the item is gone. */
export function ConfirmDelete({
  label,
  title,
  question,
  onConfirm,
  pending,
  size = 'compact-xs',
  testId,
  action,
}: {
  label: string;
  title: string;
  question: string;
  onConfirm: () => Promise<boolean>;
  pending: boolean;
  size?: ButtonProps['size'];
  testId?: string;
  /** The word on both buttons when the action is not a deletion (e.g. "Revoke"). */
  action?: string;
}) {
  const { t } = useT();
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button color="red" variant="subtle" size={size} onClick={open} aria-label={label} data-testid={testId}>
        {action ?? t('common.delete')}
      </Button>
      <Modal opened={opened} onClose={close} title={title} centered>
        <Stack>
          <Text>{question}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              {t('common.cancel')}
            </Button>
            <Button
              color="red"
              loading={pending}
              data-autofocus
              data-testid="confirm-delete"
              onClick={async () => {
                if (await onConfirm()) close();
              }}
            >
              {action ?? t('common.delete')}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
