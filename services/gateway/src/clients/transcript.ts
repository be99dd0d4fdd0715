/**
 * Reading a harness transcript (`transcript_path` of a hook event), the gateway's only file
 * read on a caller's say-so. It exists only when the operator names a root directory
 * (CTXMESH_HOOK_TRANSCRIPT_ROOT), and it never reads outside it: the path is resolved with its
 * symlinks and must then lie inside the resolved root; only a regular file's last
 * {@link TRANSCRIPT_TAIL_BYTES} are read. Any refusal or I/O error is "no text", never an error.
 */
import { open, realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { lastAssistantText, transcriptPathUnder } from '../domain/hooks';

/** Bytes read from the end of a transcript. */
export const TRANSCRIPT_TAIL_BYTES = 1024 * 1024;

/** What the hook routes read from transcripts. */
export interface TranscriptReader {
  /** The last assistant message of the transcript at `path`, or null (outside the root, unreadable, none). */
  lastAssistantMessage(path: string): Promise<string | null>;
}

/**
 * A reader confined to `root`.
 * @param root the resolved (real, absolute) root directory, as `loadGatewayConfig` checked it
 * @param onRefused told of each path refused for lying outside the root (for a log line)
 */
export function transcriptReader(root: string, onRefused: (path: string) => void = () => {}): TranscriptReader {
  return {
    async lastAssistantMessage(path) {
      if (!isAbsolute(path)) {
        onRefused(path);
        return null;
      }
      let real: string;
      try {
        real = await realpath(path);
      } catch {
        return null;
      }
      if (!transcriptPathUnder(root, real)) {
        onRefused(path);
        return null;
      }
      try {
        const fh = await open(real, 'r');
        try {
          const st = await fh.stat();
          if (!st.isFile()) return null;
          const length = Math.min(st.size, TRANSCRIPT_TAIL_BYTES);
          const buf = Buffer.alloc(length);
          await fh.read(buf, 0, length, st.size - length);
          return lastAssistantText(buf.toString('utf8'));
        } finally {
          await fh.close();
        }
      } catch {
        return null;
      }
    },
  };
}
