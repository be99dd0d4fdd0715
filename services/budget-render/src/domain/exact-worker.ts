/**
 * The worker side of {@link runExact}: exact-tokenizer work run off the event loop. Each task
 * names a kernel function and its arguments; the kernel's errors come back by name so the
 * caller can map them (an unknown tokenizer is still a 400).
 */
import { countTokens, planAndRender, planEvidence } from '@ctxmesh/kernel';
import type { ExactTask } from './offload';

/** Run one task (piscina calls the default export). */
export default function run(task: ExactTask): unknown {
  switch (task.fn) {
    case 'planAndRender':
      return planAndRender(...task.args);
    case 'planEvidence':
      return planEvidence(...task.args);
    case 'countTokens':
      return task.texts.map((t) => countTokens(t, task.tokenizer));
  }
}
