/** Export jobs and notification history (docs/api.md §Exports and notifications). */
import * as v from 'valibot';
import { IdSchema, idText } from './common.ts';
import { MESSAGES } from './messages.ts';
import { RangeInstantSchema } from './telemetry.ts';

export const EXPORT_FORMATS = ['csv', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_STATUSES = ['queued', 'running', 'done', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const ExportRequestSchema = v.object({
  deviceIds: v.pipe(
    v.array(IdSchema, MESSAGES.fieldEmpty),
    v.minLength(1, MESSAGES.fieldEmpty),
    v.maxLength(50, MESSAGES.fieldEmpty),
  ),
  params: v.union(
    [
      v.literal('all'),
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,40}$/)), MESSAGES.selectParameter),
        v.minLength(1, MESSAGES.selectParameter),
        v.maxLength(64, MESSAGES.selectParameter),
      ),
    ],
    MESSAGES.selectParameter,
  ),
  from: RangeInstantSchema,
  to: RangeInstantSchema,
  format: v.picklist(EXPORT_FORMATS, MESSAGES.selectFileType),
  fileName: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(120))),
});
export type ExportRequest = v.InferOutput<typeof ExportRequestSchema>;

export const ExportJobSchema = v.object({
  id: v.number(),
  status: v.picklist(EXPORT_STATUSES),
  progress: v.number(),
  fileName: v.string(),
  size: v.nullable(v.number()),
  error: v.optional(v.string()),
  createdAt: v.number(),
  expiresAt: v.nullable(v.number()),
});
export type ExportJob = v.InferOutput<typeof ExportJobSchema>;

export const ExportAcceptedSchema = v.object({ id: v.number(), status: v.literal('queued') });

export const NotificationSchema = v.object({
  id: v.number(),
  deviceId: v.number(),
  kind: v.string(),
  message: v.string(),
  at: v.number(),
  read: v.boolean(),
  /** What was measured (the message says it in English; clients may say it in the reader's language). */
  phase: v.optional(v.nullable(v.number())),
  value: v.optional(v.nullable(v.number())),
  threshold: v.optional(v.nullable(v.number())),
});
export type Notification = v.InferOutput<typeof NotificationSchema>;

export const NotificationsQuerySchema = v.object({
  cursor: v.optional(idText()),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^[0-9]{1,3}$/), v.transform(Number), v.minValue(1), v.maxValue(200)),
    '50',
  ),
});

export const NotificationsPageSchema = v.object({
  items: v.array(NotificationSchema),
  nextCursor: v.nullable(v.string()),
});
