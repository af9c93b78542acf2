// The shell module's face to the page: the desktop shell itself
// (shell.ts), and the notifications that go through it (notify.ts,
// notices.ts).

export { browserShell, detectShell, type Shell } from "./shell";
export { questionNotice, turnEndedNotice } from "./notices";
export {
  followRiotSetting,
  NotificationPreference,
  notificationHooks,
  pageAttention,
  shellNotificationSink,
  shouldNotify,
  webNotificationSink,
} from "./notify";
export type { NotificationSink, PageAttention, WebNotificationApi } from "./notify";
