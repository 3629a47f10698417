//! Where a consumer stands in a stream, and which spans count in the cycle it stands
//! at.

use super::{Block, Span, EVERY};

/// Where a consumer stands in a stream: which block, how many whole iterations of it
/// are done, how far into the current iteration, and the overlays that cover the
/// cycle it stands at (its group's, and longer ones of groups before it).
pub struct Cursor<const F: usize = EVERY> {
    blocks: Box<dyn Iterator<Item = Block<F>> + Send>,
    pub block: Option<Block<F>>,
    /// Whole iterations of `block` consumed.
    pub iteration: u64,
    /// Cycles of one iteration of `block` ([`Block::cycles_per_iteration`], summed
    /// once: a body of a program's records is a thousand spans).
    length: u64,
    /// The primary span of the current iteration, and cycles of it consumed.
    pub span: usize,
    pub offset: u64,
    /// Cycles of the iteration before the primary `span` begins.
    at: u64,
    /// The overlays covering the cycle, in body order: each one's index in the body
    /// and the cycle of the iteration it ends at.
    covering: Vec<(usize, u64)>,
}

impl<const F: usize> Cursor<F> {
    pub fn new(blocks: Box<dyn Iterator<Item = Block<F>> + Send>) -> Cursor<F> {
        let mut c = Cursor { blocks, block: None, iteration: 0, length: 0, span: 0, offset: 0, at: 0, covering: Vec::new() };
        c.next_block();
        c
    }

    /// Move to the next non-empty block; `false` when the stream has ended.
    pub fn next_block(&mut self) -> bool {
        self.block = None;
        for b in self.blocks.by_ref() {
            let length = b.cycles_per_iteration();
            if b.repeat > 0 && length > 0 {
                (self.block, self.length) = (Some(b), length);
                break;
            }
        }
        self.iteration = 0;
        self.restart();
        self.block.is_some()
    }

    /// Cycles of one iteration of the current block.
    pub fn cycles_per_iteration(&self) -> u64 {
        self.length
    }

    /// Is the cursor at the start of an iteration (so whole iterations may be skipped)?
    pub fn at_iteration_start(&self) -> bool {
        self.span == 0 && self.offset == 0
    }

    /// The spans that count in the current cycle: the primary, then the overlays
    /// covering it. None once the stream has ended.
    pub fn lanes(&self) -> impl Iterator<Item = &Span<F>> {
        let body = self.block.as_ref().map_or(&[][..], |b| &b.body[..]);
        body.get(self.span).into_iter().chain(self.covering.iter().filter_map(|&(j, _)| body.get(j)))
    }

    /// Cycles from here in which the same spans count: the primary's cycles left, or
    /// fewer when a covering overlay ends sooner. 0 once the stream has ended.
    pub fn steady(&self) -> u64 {
        let Some(p) = self.block.as_ref().and_then(|b| b.body.get(self.span)) else { return 0 };
        let now = self.at + self.offset;
        self.covering.iter().map(|&(_, end)| end - now).fold(p.cycles - self.offset, u64::min)
    }

    /// Moves `m` cycles forward, at most [`Cursor::steady`]'s.
    pub fn advance(&mut self, m: u64) {
        let Some(block) = self.block.as_ref() else { return };
        let Some(p) = block.body.get(self.span) else { return };
        self.offset += m;
        let now = self.at + self.offset;
        self.covering.retain(|&(_, end)| end > now);
        if self.offset < p.cycles {
            return;
        }
        let next = group_end(&block.body, self.span);
        if next < block.body.len() {
            self.at += p.cycles;
            self.offset = 0;
            self.span = next;
            self.enter();
            return;
        }
        self.iteration += 1;
        if self.iteration == block.repeat {
            self.next_block();
        } else {
            self.restart();
        }
    }

    /// `k` whole iterations from an iteration's start were counted at once.
    pub fn skip(&mut self, k: u64) {
        let Some(block) = self.block.as_ref() else { return };
        self.iteration += k;
        if self.iteration >= block.repeat {
            self.next_block();
        }
    }

    /// To the start of the current iteration.
    fn restart(&mut self) {
        self.span = 0;
        self.offset = 0;
        self.at = 0;
        self.covering.clear();
        self.enter();
    }

    /// The overlays of the group that begins at `span` cover from here (none outlasts
    /// its iteration: the stream's producers end them there).
    fn enter(&mut self) {
        let Some(block) = self.block.as_ref() else { return };
        let end = group_end(&block.body, self.span);
        for j in self.span + 1..end {
            let cycles = block.body[j].cycles;
            if cycles > 0 {
                self.covering.push((j, self.at + cycles));
            }
        }
    }
}

/// The end of the span group that starts at `start`: the next primary span.
fn group_end<const F: usize>(body: &[Span<F>], start: usize) -> usize {
    body.iter().skip(start + 1).position(|s| !s.overlay).map_or(body.len(), |n| start + 1 + n)
}
