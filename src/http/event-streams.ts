// Event streams held open per principal (max_event_streams): each holds a connection, an open file, for as long as
// its reader stays, so one user, or one script with a bug, could otherwise hold them all.
export class EventStreams {
  private readonly byPrincipal = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly max: number,
    /** Told of each stream refused (max_event_streams) and each reader dropped for not reading (slow_reader). */
    private readonly refused: (reason: 'max_event_streams' | 'slow_reader') => void = () => {},
  ) {}

  /**
   * Counts a stream `principal` opens and returns the function that counts it closed (once, however often it is
   * called), or undefined when the principal holds `max` already.
   */
  enter(principal: string): (() => void) | undefined {
    const held = this.byPrincipal.get(principal) ?? 0;
    if (held >= this.max) {
      this.refused('max_event_streams');
      return undefined;
    }
    this.byPrincipal.set(principal, held + 1);
    this.total += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total -= 1;
      const now = (this.byPrincipal.get(principal) ?? 1) - 1;
      if (now === 0) this.byPrincipal.delete(principal);
      else this.byPrincipal.set(principal, now);
    };
  }

  /** A reader whose connection stayed full for keep_alive_time was dropped. */
  stalled(): void {
    this.refused('slow_reader');
  }

  get open(): number {
    return this.total;
  }

  /** The 429 body of a refused stream, naming the setting. */
  refusal(): { error: string[] } {
    return {
      error: [`Too many event streams open for this user or client: at most ${this.max} at once (max_event_streams)`],
    };
  }
}
