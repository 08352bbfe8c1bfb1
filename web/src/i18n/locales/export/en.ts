/** English messages of the export screens, merged into the English catalogue (../en.ts). */
export const exportEn = {} as const;
