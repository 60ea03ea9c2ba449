/**
 * Who draws on the terminal: progress displays register here while they run, and a prompt takes
 * the terminal by stopping them first, so no redraw erases the question while it waits.
 */

/** A display that draws until stopped. */
export interface TerminalDisplay {
  stop(): Promise<unknown>;
}

const displays = new Set<TerminalDisplay>();

/** Registers a running display; the returned function unregisters it. */
export function drawsOnTerminal(display: TerminalDisplay): () => void {
  displays.add(display);
  return () => displays.delete(display);
}

/** Stops every running display and waits until each has drawn its last frame. */
export async function takeTerminal(): Promise<void> {
  await Promise.all([...displays].map((d) => d.stop()));
}
