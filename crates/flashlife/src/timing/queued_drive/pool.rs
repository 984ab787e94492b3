//! Fixed-size records addressed by `u32`, reused once released: the adapter's parked
//! transactions and its request waiters. Once grown to the most ever in use, nothing
//! allocates.

/// The records and the indices free for reuse.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Pool<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T: Copy> Pool<T> {
    pub fn new() -> Self {
        Pool { items: Vec::new(), free: Vec::new() }
    }

    /// Store `item`; returns its index.
    #[inline]
    pub fn alloc(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = item;
                i
            }
            None => {
                self.items.push(item);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Ask for the record at `i` to be brought into cache (a hint).
    #[inline]
    pub fn prefetch(&self, i: u32) {
        crate::cache_hint::prefetch_all(&self.items, i as usize);
    }

    /// Take the record at `i` out (its index is free from now on).
    #[inline]
    pub fn take(&mut self, i: u32) -> T {
        self.free.push(i);
        self.items[i as usize]
    }
}
