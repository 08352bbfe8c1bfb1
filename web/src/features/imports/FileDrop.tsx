/** A drop zone that is also the file picker: a file dropped on it or chosen through it is handed on. */
import { Button, Paper, Stack, Text } from '@mantine/core';
import { type DragEvent, useId, useRef, useState } from 'react';
import { useT } from '../../i18n/i18n.ts';

/** A file size as people read it (1.2 MB). */
export function formatSize(bytes: number, locale: string): string {
  const units = ['B', 'kB', 'MB', 'GB'] as const;
  let n = bytes;
  let u = 0;
  while (n >= 1000 && u < units.length - 1) {
    n /= 1000;
    u++;
  }
  const digits = u === 0 || n >= 100 ? 0 : 1;
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(n)} ${units[u]}`;
}

export function FileDrop({
  file,
  onFile,
  disabled,
}: {
  file: File | null;
  onFile: (f: File) => void;
  disabled?: boolean;
}) {
  const { t, locale } = useT();
  const input = useRef<HTMLInputElement>(null);
  const inputId = useId();
  const [over, setOver] = useState(false);
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer.files[0];
    if (f && !disabled) onFile(f);
  };
  return (
    <Paper
      withBorder
      p="md"
      radius="md"
      data-testid="import-drop"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
      style={{ borderStyle: 'dashed', background: over ? 'var(--mantine-color-blue-light)' : undefined }}
    >
      <Stack gap="xs" align="center">
        <label htmlFor={inputId}>
          <Text size="sm" fw={500} ta="center">
            {t('imports.file.label')}
          </Text>
        </label>
        <Text size="sm" c="dimmed" ta="center">
          {t('imports.file.drop')}
        </Text>
        <input
          ref={input}
          id={inputId}
          type="file"
          accept=".csv,.txt,.lp,.line,text/csv,text/plain"
          style={{ display: 'none' }}
          data-testid="import-file"
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            if (f) onFile(f);
            e.currentTarget.value = '';
          }}
        />
        <Button variant="light" onClick={() => input.current?.click()} disabled={disabled}>
          {t('imports.file.choose')}
        </Button>
        {file && (
          <Text size="sm" ta="center" style={{ overflowWrap: 'anywhere' }} data-testid="import-file-name">
            {t('imports.file.picked', { name: file.name, size: formatSize(file.size, locale) })}
          </Text>
        )}
      </Stack>
    </Paper>
  );
}
