/** English messages of the analytics screens, merged into the English catalogue (../en.ts). */
export const analyticsEn = {} as const;
