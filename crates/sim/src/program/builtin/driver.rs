//! Device drivers of the kernel: a network adapter's receive and send paths, whose
//! data the adapter moves by DMA (`program::Dma`) through rings of descriptors, as
//! Linux's network drivers do.

use super::layout::*;
use super::user::Thread;
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, Memory, Op, Phase};
use crate::stream::Privilege;

/// A packet's buffer: an Ethernet frame (1,514 bytes) rounded up to whole lines of
/// every modelled cache (32 to 128 bytes).
pub const PACKET: u64 = 1536;
/// The adapter's descriptor: buffer address, length, flags and status.
const DESCRIPTOR: u64 = 16;
/// Descriptors in a ring (a page of them).
const RING: u64 = PAGE / DESCRIPTOR;
/// The protocol headers of a packet sent, in a buffer of their own (the adapter
/// gathers headers and payload).
const HEADERS: u64 = 128;

/// Which way the packets go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The adapter writes received packets into the buffers it was given.
    Receive,
    /// The adapter reads the packets the kernel put in its buffers, with their
    /// headers.
    Send,
}

/// The driver's loop over `packets` packets in consecutive buffers from `buffers`:
/// per packet it fills in the ring's next descriptor and rings the adapter's doorbell,
/// a packet to send under the adapter's transmit lock (Linux's `netif_tx_lock`, taken
/// for each packet its `dev_queue_xmit` hands the driver), in the page after the
/// ring; the adapter reads the descriptor, moves the packet (and a sent packet's
/// headers) and writes the descriptor back with its status.
pub fn packets(rng: &mut Rng, t: Thread, buffers: u64, packets: u64, way: Direction) -> Phase {
    let mut b = Body::new(Privilege::KERNEL, t.context, code_address(rng, &SERVICE_TEXT));
    let ring = KERNEL_DATA.start + (t.index as u64 + 1) * 0x10_0000 + 2 * rng.below(8) * PAGE;
    let first = DESCRIPTOR * rng.below(RING);
    let descriptors =
        b.stream(DataStream { stride: DESCRIPTOR as i64, footprint: PAGE - first, ..DataStream::fixed(ring + first, Memory::Cacheable) });
    let data = b.stream(DataStream { stride: PACKET as i64, footprint: packets * PACKET, ..DataStream::fixed(buffers, Memory::Cacheable) });
    let doorbell = b.stream(DataStream::fixed(DEVICES.start + 0x1000 * rng.below(16) + 0x10, Memory::Device));
    let lock = b.stream(DataStream::fixed(ring + PAGE, Memory::Cacheable));
    let send = way == Direction::Send;
    if send {
        // spin_lock: a compare-and-swap whose value the loop waits for.
        b.op(Op::Atomic(Access { stream: lock, offset: 0, size: 4, use_next: true }));
    }
    // The descriptor: the buffer's address and length, then the flags that hand it over.
    b.int(rng.range(2, 5));
    b.store(descriptors, 0, 8).store(descriptors, 8, 4);
    // wmb(): the descriptor is in memory before the adapter is told.
    b.op(Op::Barrier);
    b.store(doorbell, 0, 4);
    b.int(rng.range(2, 6));
    if send {
        // spin_unlock: a release store (on Itanium `mmiowb()`'s `mf.a` first, the
        // doorbell having been written under the lock: ERRATA MMC72).
        b.op(Op::Barrier).store(lock, 0, 4);
    }
    b.dma(descriptors, DESCRIPTOR as u32, false);
    if way == Direction::Send {
        let headers = b.stream(DataStream {
            stride: HEADERS as i64,
            footprint: packets * HEADERS,
            ..DataStream::fixed(buffer(rng, &KERNEL_DATA, packets * HEADERS) + 0x8_0000, Memory::Cacheable)
        });
        b.dma(headers, HEADERS as u32, false);
    }
    b.dma(data, PACKET as u32, way == Direction::Receive);
    b.dma(descriptors, DESCRIPTOR as u32, true);
    b.close_loop(packets)
}
