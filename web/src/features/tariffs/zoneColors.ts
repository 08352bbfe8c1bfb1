import type { Zone } from '@kilowatch/core';

export type Scheme = 'light' | 'dark';

/** Zone fills with text that keeps AA contrast on them, per colour scheme. */
export const ZONE_COLORS: Record<Scheme, Record<Zone, { bg: string; fg: string }>> = {
  light: {
    1: { bg: '#ffd8a8', fg: '#212529' },
    2: { bg: '#b2f2bb', fg: '#212529' },
    3: { bg: '#eebefa', fg: '#212529' },
  },
  dark: {
    1: { bg: '#8a3b00', fg: '#ffffff' },
    2: { bg: '#1b5e20', fg: '#ffffff' },
    3: { bg: '#5f2a73', fg: '#ffffff' },
  },
};
