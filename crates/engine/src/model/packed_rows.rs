//! Packed parameter rows remembered for the parameter list they were made from. Packed rows
//! (`[R, 1, P]`: each run's parameters flattened in the model's order) are the layout of the
//! fused optimizer and of the GPU's GRU kernels. The optimizer leaves its new parameters
//! packed, so the next step's passes and the epoch's probe take those rows as they are
//! instead of packing again: a launch fewer per pass on a GPU.
//!
//! Parameters are known by the address and length of the slice a [`Known`] guard borrows:
//! while the guard lives the slice can neither change nor move, so a slice with that address
//! and length holds the same parameters.

use burn::tensor::Tensor;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

thread_local! {
    static KNOWN: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    static NEXT: Cell<u64> = const { Cell::new(0) };
}

struct Entry {
    id: u64,
    at: usize,
    len: usize,
    packed: Tensor<3>,
}

/// While alive, [`of`] answers the packed rows given for the borrowed parameters.
pub struct Known<'a> {
    id: u64,
    _params: PhantomData<&'a [Tensor<3>]>,
}

/// Remember that `packed` are `params`'s packed rows (the caller's promise: the optimizer's
/// own rows, which its new parameters were split from) for as long as the guard lives.
pub fn know(params: &[Tensor<3>], packed: Tensor<3>) -> Known<'_> {
    let id = NEXT.with(|n| n.replace(n.get() + 1));
    let (at, len) = (params.as_ptr() as usize, params.len());
    KNOWN.with(|k| k.borrow_mut().push(Entry { id, at, len, packed }));
    Known { id, _params: PhantomData }
}

/// [`know`] where there are rows to remember.
pub fn know_some(params: &[Tensor<3>], packed: Option<Tensor<3>>) -> Option<Known<'_>> {
    packed.map(|p| know(params, p))
}

impl Drop for Known<'_> {
    fn drop(&mut self) {
        // Its own entry, whatever order guards held across awaits end in.
        let _ = KNOWN.try_with(|k| k.borrow_mut().retain(|e| e.id != self.id));
    }
}

/// The packed rows a live guard knows for `params`, if any.
#[cfg_attr(not(feature = "cube"), allow(dead_code))]
pub fn of(params: &[Tensor<3>]) -> Option<Tensor<3>> {
    if params.is_empty() {
        return None;
    }
    let at = params.as_ptr() as usize;
    KNOWN.with(|k| k.borrow().iter().rev().find(|e| e.at == at && e.len == params.len()).map(|e| e.packed.clone()))
}

/// Each run's values of every tensor in one row, `[R, 1, P]` (the tensors' values in order).
pub fn pack(ts: &[Tensor<3>]) -> Tensor<3> {
    let flat: Vec<Tensor<3>> = ts
        .iter()
        .map(|t| {
            let [r, a, b] = t.dims();
            t.clone().reshape([r, 1, a * b])
        })
        .collect();
    Tensor::cat(flat, 2)
}

/// `params`' packed rows: the ones a live guard knows, else [`pack`]ed here.
#[cfg_attr(not(feature = "cube"), allow(dead_code))]
pub fn known_or_pack(params: &[Tensor<3>]) -> Tensor<3> {
    of(params).unwrap_or_else(|| pack(params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, TensorData};

    fn t(v: f32) -> Tensor<3> {
        Tensor::from_data(TensorData::new(vec![v], [1, 1, 1]), &Device::flex())
    }

    #[test]
    fn rows_are_known_for_the_borrowed_slice_only_while_the_guard_lives() {
        let params = vec![t(1.0), t(2.0)];
        let other = params.clone();
        assert!(of(&params).is_none());
        {
            let _known = know(&params, t(3.0));
            let got = of(&params).expect("known");
            assert_eq!(got.into_data().try_to_vec::<f32>().unwrap(), vec![3.0]);
            // Equal values elsewhere, or a part of the slice, are other parameters.
            assert!(of(&other).is_none());
            assert!(of(&params[..1]).is_none());
            let inner = know(&other, t(4.0));
            let outer = know(&params, t(5.0));
            drop(inner);
            assert_eq!(of(&params).unwrap().into_data().try_to_vec::<f32>().unwrap(), vec![5.0]);
            assert!(of(&other).is_none());
            drop(outer);
            assert_eq!(of(&params).unwrap().into_data().try_to_vec::<f32>().unwrap(), vec![3.0]);
        }
        assert!(of(&params).is_none());
        assert!(know_some(&params, None).is_none());
    }
}
