//! The GRU's parameters in their one order: the per-parameter tensors (`Params`), their
//! names and shapes, the fused CPU kernels' `GruTensors`, the GPU kernels' packed row and
//! every gradient follow [`GruParam::ALL`]. Weights are stored transposed relative to torch
//! (`x @ w_ih`), gates in torch's order (r | z | n).

/// One GRU parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GruParam {
    /// Input weights `[F, 3H]`.
    WIh,
    /// Recurrent weights `[H, 3H]`.
    WHh,
    /// Input bias `[1, 3H]`.
    BIh,
    /// Recurrent bias `[1, 3H]`.
    BHh,
    /// Readout weights `[H, O]`.
    WO,
    /// Readout bias `[1, O]`.
    BO,
}

impl GruParam {
    /// Every parameter, in the model's order.
    pub const ALL: [GruParam; 6] =
        [GruParam::WIh, GruParam::WHh, GruParam::BIh, GruParam::BHh, GruParam::WO, GruParam::BO];

    /// Their names, in that order (`RecurrentModel::param_names`).
    pub const NAMES: [&'static str; 6] = {
        let mut names = [""; 6];
        let mut i = 0;
        while i < 6 {
            names[i] = GruParam::ALL[i].name();
            i += 1;
        }
        names
    };

    /// Its position in the order.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        match self {
            GruParam::WIh => "w_ih",
            GruParam::WHh => "w_hh",
            GruParam::BIh => "b_ih",
            GruParam::BHh => "b_hh",
            GruParam::WO => "w_o",
            GruParam::BO => "b_o",
        }
    }

    /// Its per-run shape `[rows, cols]` for `f` inputs, `h` hidden units and `o` outputs.
    pub const fn shape(self, f: usize, h: usize, o: usize) -> [usize; 2] {
        match self {
            GruParam::WIh => [f, 3 * h],
            GruParam::WHh => [h, 3 * h],
            GruParam::BIh | GruParam::BHh => [1, 3 * h],
            GruParam::WO => [h, o],
            GruParam::BO => [1, o],
        }
    }

    /// Where each parameter starts in one run's packed row (each row-major, one after the
    /// other in the order), and the row's length last.
    pub fn packed_offsets(f: usize, h: usize, o: usize) -> [usize; 7] {
        let mut out = [0; 7];
        for p in GruParam::ALL {
            let [rows, cols] = p.shape(f, h, o);
            out[p.index() + 1] = out[p.index()] + rows * cols;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::GruParam;

    #[test]
    fn the_order_is_the_discriminants_and_the_names_follow_it() {
        for (i, p) in GruParam::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(GruParam::NAMES[i], p.name());
        }
        assert_eq!(GruParam::NAMES, ["w_ih", "w_hh", "b_ih", "b_hh", "w_o", "b_o"]);
        // F = 2, H = 3, O = 1: 2*9, 3*9, 9, 9, 3*1, 1.
        assert_eq!(GruParam::packed_offsets(2, 3, 1), [0, 18, 45, 54, 63, 66, 67]);
    }
}
