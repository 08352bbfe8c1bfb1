import { createTheme, localStorageColorSchemeManager } from '@mantine/core';
import { STORAGE_KEYS } from '../lib/storage.ts';

/** Primary colour orange (SPEC.md §9); 576 px is the mobile breakpoint. */
export const theme = createTheme({
  primaryColor: 'orange',
  primaryShade: { light: 7, dark: 5 },
  defaultRadius: 'md',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  breakpoints: { xs: '36em', sm: '48em', md: '62em', lg: '75em', xl: '88em' },
});

/** Light, dark or system ("auto"), stored locally under the theme-mode key; default system. */
export const colorSchemeManager = localStorageColorSchemeManager({ key: STORAGE_KEYS.themeMode });
