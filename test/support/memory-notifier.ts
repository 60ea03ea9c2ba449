/** A {@link Notifier} that keeps every notification in memory, for tests. */
import type { Notification, Notifier } from '#incident/notifier.js';

export function createMemoryNotifier(): Notifier & { sent: Notification[] } {
  const sent: Notification[] = [];
  return {
    sent,
    async notify(n) {
      sent.push(n);
    },
  };
}
