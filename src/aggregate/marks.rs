//! A set of small integer ids emptied in constant time, for "count each owner, category or
//! frame once per stack". A linear `contains` over the ids seen so far made every view
//! quadratic in stack depth (a 1 M-frame stack took minutes); marks keep it linear.

/// Ids `0..len`; an id is in the set while its mark equals the current generation.
pub(crate) struct Marks {
    marks: Vec<u32>,
    generation: u32,
}

impl Marks {
    pub(crate) fn new(len: usize) -> Marks {
        Marks {
            marks: vec![0; len],
            generation: 1,
        }
    }

    /// Empties the set.
    pub(crate) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // after 2^32 clears the old marks could read as current: reset them once
            self.marks.fill(0);
            self.generation = 1;
        }
    }

    /// Adds `id`; true when it was not in the set yet.
    pub(crate) fn insert(&mut self, id: usize) -> bool {
        let mark = &mut self.marks[id];
        if *mark == self.generation {
            return false;
        }
        *mark = self.generation;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Marks;

    #[test]
    fn ids_are_new_once_per_generation() {
        let mut m = Marks::new(4);
        assert!(m.insert(2));
        assert!(!m.insert(2));
        assert!(m.insert(3));
        m.clear();
        assert!(m.insert(2));
        m.generation = u32::MAX;
        m.clear();
        assert!(m.insert(2) && m.insert(3));
    }
}
