import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BOARD_CSV_HEADER, boardCsvLine } from '../../../common/csv';
import { LeaderboardsService } from '../../../leaderboards/graphql/leaderboards.service';
import { withContext } from '../support/app-context';
import { parseFlags, positiveInt, UsageError } from '../support/cli-args';
import type { Command } from './command';

export const exportCommand: Command<{ spaceId: number; sprintId: number | null }> = {
  name: 'export',
  usage: 'export --space ID [--sprint ID]',
  help: `  export --space ID [--sprint ID]
                              print a board as CSV in rank order: rank,address,username,points`,
  parse(args) {
    const option = parseFlags(args, ['space', 'sprint'], this.usage);
    const spaceId = positiveInt(option('space'), '--space', 0);
    if (spaceId === 0) throw new UsageError(`usage: ${this.usage}`);
    const sprint = option('sprint');
    return { spaceId, sprintId: sprint === undefined ? null : positiveInt(sprint, '--sprint', 0) };
  },
  async run({ spaceId, sprintId }, config) {
    await withContext(
      config,
      async (app) => {
        const board = app.get(LeaderboardsService).exportBoard(spaceId, sprintId);
        async function* csv(): AsyncGenerator<string> {
          let text = `${BOARD_CSV_HEADER}\n`;
          for await (const row of board) {
            text += `${boardCsvLine(row)}\n`;
            if (text.length >= 64 * 1024) {
              yield text;
              text = '';
            }
          }
          yield text;
        }
        try {
          await pipeline(Readable.from(csv()), process.stdout, { end: false });
        } catch (error) {
          // `export ... | head` closes the pipe early: that is a reader's choice, not a failure.
          if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
        }
      },
      { migrate: false },
    );
    return 0;
  },
};
