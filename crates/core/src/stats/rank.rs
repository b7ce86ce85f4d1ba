//! Average ranks (ties share the mean of their positions) and Spearman's correlation.

/// 1-based average ranks of `xs`, and the sizes of the tie groups.
pub fn average_ranks(xs: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            ranks[o] = avg;
        }
        ties.push(j - i + 1);
        i = j + 1;
    }
    (ranks, ties)
}

/// Pearson correlation; NaN if either side is constant.
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let ma = super::mean(a);
    let mb = super::mean(b);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    if saa == 0.0 || sbb == 0.0 {
        return f64::NAN;
    }
    sab / (saa * sbb).sqrt()
}

/// Spearman's rank correlation (Pearson on average ranks); NaN if either side is constant.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    pearson(&average_ranks(a).0, &average_ranks(b).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_with_ties() {
        let (r, t) = average_ranks(&[10.0, 20.0, 10.0, 30.0]);
        assert_eq!(r, vec![1.5, 3.0, 1.5, 4.0]);
        assert_eq!(t, vec![2, 1, 1]);
    }

    #[test]
    fn spearman_hand_cases() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        assert!(spearman(&[1.0, 2.0, 3.0], &[5.0, 5.0, 5.0]).is_nan());
    }
}
