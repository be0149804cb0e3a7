import { FREQUENCIES, MAX_RECIPIENTS, SCHEDULE_CONTENTS, SCHEDULE_LANGS, type ScheduleInput } from '../../engine/index.js';
import { looseRequestSchema, nullable, refTo, responseSchema } from '../schemas.js';

const time = { type: 'string', format: 'date-time' };
const date = { type: 'string', format: 'date' };

// The addresses are plain strings here: the engine checks each (report_recipient_invalid names which), CR and LF among what it refuses.
export const scheduleCreate = looseRequestSchema<ScheduleInput>('reportScheduleCreate', {
  type: 'object', additionalProperties: false, required: ['frequency', 'recipients', 'content'],
  properties: {
    frequency: { enum: [...FREQUENCIES], description: 'daily: 08:00 local, the day before; weekly: Monday 08:00, the previous Monday to Sunday; monthly: day 1 08:00, the previous month' },
    recipients: {
      type: 'array', minItems: 1, maxItems: MAX_RECIPIENTS, items: { type: 'string', minLength: 3, maxLength: 254 },
      description: `1 to ${MAX_RECIPIENTS} plain e-mail addresses (no display name); they need no account. One message goes to all of them`,
    },
    hotspot_id: { type: 'string', minLength: 1, maxLength: 64, description: "One hotspot of the tenant (its zone); absent: every hotspot, in the tenant's zone" },
    content: { enum: [...SCHEDULE_CONTENTS], description: 'report: the figures in the body and the sessions as CSV; compliance: the 5651 daily log summary and the personal-data audit summary (JSON and CSV)' },
    lang: { enum: [...SCHEDULE_LANGS], description: "Language of the mail (tr or en); absent: tr when the schedule's zone is Europe/Istanbul, else en" },
    name: { type: 'string', maxLength: 120, description: 'A label of your own, shown in the mail' },
  },
});

export const reportSchedule = responseSchema('reportSchedule', {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'rsc_...' }, name: { type: 'string' }, frequency: { enum: [...FREQUENCIES] },
    recipients: { type: 'array', items: { type: 'string' } }, hotspot_id: nullable({ type: 'string' }), content: { enum: [...SCHEDULE_CONTENTS] },
    lang: { enum: [...SCHEDULE_LANGS] }, time_zone: { type: 'string', description: "The zone of its due times and days: the hotspot's, or the tenant's" },
    created_at: time, next_run_at: { ...time, description: 'Due time of the next period not yet taken up (in the past while one waits to be sent)' },
  },
});

export const reportScheduleList = responseSchema('reportScheduleList', { type: 'object', properties: { data: { type: 'array', items: refTo(reportSchedule) } } }, [reportSchedule]);

export const reportScheduleRuns = responseSchema('reportScheduleRuns', {
  type: 'object',
  properties: {
    data: {
      type: 'array', description: 'Newest period first (at most 100)',
      items: {
        type: 'object',
        properties: {
          period: { type: 'object', properties: { from: date, to: date } }, due_at: time, sent_at: nullable(time),
          late: { type: 'boolean', description: 'its latest attempt started more than 15 minutes after due_at; the mail says so' },
          status: { enum: ['due', 'sending', 'sent', 'failed', 'skipped'], description: 'skipped: older than the catch-up cap (the newest 31 periods are caught up)' },
          attempts: { type: 'integer', minimum: 0 }, error: nullable({ type: 'string' }),
        },
      },
    },
  },
});
