import { Badge, type CSSVariablesResolver, createTheme, localStorageColorSchemeManager } from '@mantine/core';
import { STORAGE_KEYS } from '../lib/storage.ts';

/** Primary colour orange (docs/spec.md §9); 576 px is the mobile breakpoint. */
export const theme = createTheme({
  primaryColor: 'orange',
  // Orange darkened at shades 7–9 so white text on filled controls meets WCAG AA (4.5:1).
  colors: {
    orange: [
      '#fff4e6',
      '#ffe8cc',
      '#ffd8a8',
      '#ffc078',
      '#ffa94d',
      '#ff922b',
      '#fd7e14',
      '#c2410c',
      '#9a3412',
      '#7c2d12',
    ],
  },
  primaryShade: { light: 7, dark: 7 },
  autoContrast: true,
  defaultRadius: 'md',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  breakpoints: { xs: '36em', sm: '48em', md: '62em', lg: '75em', xl: '88em' },
  components: {
    // A badge's word is never cut to "ON…": in a narrow table cell or row the badge keeps its own width.
    Badge: Badge.extend({ styles: { root: { minWidth: 'max-content', flexShrink: 0 } } }),
  },
});

/** Light, dark or system ("auto"), stored locally under the theme-mode key; default system. */
export const colorSchemeManager = localStorageColorSchemeManager({ key: STORAGE_KEYS.themeMode });

/**
 * Colours that reach WCAG AA (4.5:1) in both schemes where Mantine's defaults do not: dimmed grey, the
 * error red of field messages, the text of light-variant green (badges, alerts), and the brand orange
 * used as text (`--kw-brand-text`: dark orange on white, light orange on the dark body).
 */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    // green.9 on green.1 (light badges, alerts) is 3.8:1; this green is 5.4:1.
    '--mantine-color-green-light-color': '#1f6f30',
    '--kw-brand-text': 'var(--mantine-color-orange-8)',
  },
  dark: {
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-error': 'var(--mantine-color-red-4)',
    '--kw-brand-text': 'var(--mantine-color-orange-4)',
  },
});
