//! [`OffloadSet`]: mirrored tensors sharing a memory budget on one device, whose least
//! recently used copies there are evicted to make room — every k-point's wavefunctions
//! kept on the host, as many as fit on the GPU.
//!
//! The policy ([`LruBudget`]) is plain bookkeeping, tested on any machine against a
//! model; the set applies it to [`MirroredTensor`]s, whose eviction copies a copy back
//! to the host first when it holds the only current values.

use ctensor_base::gpu::Stream;
use ctensor_base::{DeviceType, Error, Result};

use super::mirrored::MirroredTensor;
use super::tensor::Tensor;

/// Which members hold memory on the budgeted device, and in which order they were last
/// used: the least recently used are the ones to evict.
#[derive(Debug, Clone, Default)]
pub struct LruBudget {
    budget: usize,
    /// (member, bytes, last use) of the resident members.
    resident: Vec<(usize, usize, u64)>,
    tick: u64,
}

impl LruBudget {
    /// An empty budget of `budget` bytes.
    pub fn new(budget: usize) -> LruBudget {
        LruBudget {
            budget,
            resident: Vec::new(),
            tick: 0,
        }
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes held by resident members.
    pub fn used(&self) -> usize {
        self.resident.iter().map(|r| r.1).sum()
    }

    /// `true` when `member` is resident.
    pub fn is_resident(&self, member: usize) -> bool {
        self.resident.iter().any(|r| r.0 == member)
    }

    /// The members to evict, least recently used first, so that `member` (of `bytes`
    /// bytes) fits; nothing when it is resident already. The policy does not change:
    /// call [`admit`](Self::admit) once the victims are gone.
    ///
    /// Errors: `InvalidArgument` when `bytes` alone exceed the budget.
    pub fn victims(&self, member: usize, bytes: usize) -> Result<Vec<usize>> {
        if self.is_resident(member) {
            return Ok(Vec::new());
        }
        if bytes > self.budget {
            return Err(Error::InvalidArgument {
                op: "OffloadSet",
                expected: format!("a tensor within the device budget of {} bytes", self.budget),
                given: format!("member {member} of {bytes} bytes"),
            });
        }
        let mut by_age: Vec<&(usize, usize, u64)> = self.resident.iter().collect();
        by_age.sort_by_key(|r| r.2);
        let mut free = self.budget - self.used();
        let mut out = Vec::new();
        for r in by_age {
            if free >= bytes {
                break;
            }
            free += r.1;
            out.push(r.0);
        }
        Ok(out)
    }

    /// Records a use of `member` (`bytes` bytes) on the device: resident from now on,
    /// the most recently used.
    pub fn admit(&mut self, member: usize, bytes: usize) {
        self.tick += 1;
        match self.resident.iter_mut().find(|r| r.0 == member) {
            Some(r) => r.2 = self.tick,
            None => self.resident.push((member, bytes, self.tick)),
        }
    }

    /// Records that `member` no longer holds memory on the device.
    pub fn remove(&mut self, member: usize) {
        self.resident.retain(|r| r.0 != member);
    }
}

/// Mirrored tensors whose copies on one device share a budget of bytes: asking for a
/// member's copy there first evicts the least recently used other members' copies until
/// it fits (each eviction brings the host copy up to date when needed). Copies on other
/// devices are not counted.
///
/// ```
/// use ctensor_aten::{DataType, DeviceType, MirroredTensor, OffloadSet};
/// // Room for two of the three k-points' 16 KiB wavefunctions on the GPU.
/// let mut psi = OffloadSet::new(DeviceType::Gpu, 2 * 16384);
/// for _ in 0..3 {
///     psi.push(MirroredTensor::new(DataType::ComplexDouble, &[128, 8])?)?;
/// }
/// psi.write_only(0, DeviceType::Cpu)?.fill(1.0)?; // host copies are outside the budget
/// assert_eq!(psi.resident_bytes(), 0);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[derive(Debug)]
pub struct OffloadSet {
    device: DeviceType,
    members: Vec<MirroredTensor>,
    lru: LruBudget,
    evictions: u64,
}

impl OffloadSet {
    /// An empty set whose copies on `device` may hold at most `budget` bytes.
    pub fn new(device: DeviceType, budget: usize) -> OffloadSet {
        OffloadSet {
            device,
            members: Vec::new(),
            lru: LruBudget::new(budget),
            evictions: 0,
        }
    }

    /// Adds `m` and returns its index. A member that already has a copy on the budgeted
    /// device counts as used now.
    ///
    /// Errors: `InvalidArgument` when its copy there does not fit the budget even alone.
    pub fn push(&mut self, m: MirroredTensor) -> Result<usize> {
        let i = self.members.len();
        let on_device = m.has_copy(self.device);
        let bytes = m.bytes();
        self.members.push(m);
        if on_device {
            if let Err(e) = self.make_room(i) {
                self.members.pop();
                return Err(e);
            }
            self.lru.admit(i, bytes);
        }
        Ok(i)
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// `true` when the set has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Member `i`, to inspect (versions, which copies exist).
    pub fn get(&self, i: usize) -> Result<&MirroredTensor> {
        self.members.get(i).ok_or_else(|| self.no_member(i))
    }

    /// Bytes the members' copies on the budgeted device hold.
    pub fn resident_bytes(&self) -> usize {
        self.lru.used()
    }

    /// Copies evicted from the budgeted device, in all.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// [`MirroredTensor::read`] of member `i`, after making room when `device` is the
    /// budgeted one.
    pub fn read(&mut self, i: usize, device: DeviceType) -> Result<&Tensor> {
        let bytes = self.room_for(i, device)?;
        let t = self.members[i].read(device)?;
        admit(&mut self.lru, i, bytes);
        Ok(t)
    }

    /// [`MirroredTensor::write`] of member `i`, after making room.
    pub fn write(&mut self, i: usize, device: DeviceType) -> Result<&mut Tensor> {
        let bytes = self.room_for(i, device)?;
        let t = self.members[i].write(device)?;
        admit(&mut self.lru, i, bytes);
        Ok(t)
    }

    /// [`MirroredTensor::write_only`] of member `i`, after making room.
    pub fn write_only(&mut self, i: usize, device: DeviceType) -> Result<&mut Tensor> {
        let bytes = self.room_for(i, device)?;
        let t = self.members[i].write_only(device)?;
        admit(&mut self.lru, i, bytes);
        Ok(t)
    }

    /// [`MirroredTensor::prefetch`] of member `i` on `stream`, after making room.
    pub fn prefetch(&mut self, i: usize, device: DeviceType, stream: &Stream) -> Result<()> {
        let bytes = self.room_for(i, device)?;
        self.members[i].prefetch(device, stream)?;
        admit(&mut self.lru, i, bytes);
        Ok(())
    }

    fn no_member(&self, i: usize) -> Error {
        Error::OutOfRange {
            op: "OffloadSet",
            what: "member".into(),
            given: i as i64,
            valid: format!("0..{}", self.members.len()),
        }
    }

    /// Makes room for member `i` when `device` is the budgeted one; what to record once
    /// the access has succeeded: `Some(bytes)` for a use of the budgeted device.
    fn room_for(&mut self, i: usize, device: DeviceType) -> Result<Option<usize>> {
        if i >= self.members.len() {
            return Err(self.no_member(i));
        }
        if device != self.device {
            return Ok(None);
        }
        self.make_room(i)?;
        Ok(Some(self.members[i].bytes()))
    }

    /// Evicts the least recently used other members until member `i` fits.
    fn make_room(&mut self, i: usize) -> Result<()> {
        for v in self.lru.victims(i, self.members[i].bytes())? {
            self.members[v].evict(self.device)?;
            self.lru.remove(v);
            self.evictions += 1;
        }
        Ok(())
    }
}

/// Records a use that [`OffloadSet::room_for`] asked to record.
fn admit(lru: &mut LruBudget, i: usize, bytes: Option<usize>) {
    if let Some(b) = bytes {
        lru.admit(i, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random uses against a model that keeps the resident members in use order:
    /// the budget is never exceeded, the victims are exactly the oldest members needed
    /// to make room, and a resident member is never evicted to make room for itself.
    #[test]
    fn lru_evicts_exactly_the_least_recently_used_needed() {
        for seed in 0..200u64 {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let budget = rng.gen_range(1..5000);
            let sizes: Vec<usize> = (0..12).map(|_| rng.gen_range(0..2000)).collect();
            let mut lru = LruBudget::new(budget);
            let mut model: Vec<usize> = Vec::new(); // resident, oldest first
            for _ in 0..200 {
                let m = rng.gen_range(0..sizes.len());
                let bytes = sizes[m];
                let got = lru.victims(m, bytes);
                if bytes > budget {
                    assert!(matches!(got, Err(Error::InvalidArgument { .. })));
                    continue;
                }
                let got = got.unwrap();
                let want: Vec<usize> = if model.contains(&m) {
                    Vec::new()
                } else {
                    let mut used: usize = model.iter().map(|&k| sizes[k]).sum();
                    let mut w = Vec::new();
                    for &k in &model {
                        if used + bytes <= budget {
                            break;
                        }
                        used -= sizes[k];
                        w.push(k);
                    }
                    w
                };
                assert_eq!(got, want, "seed {seed}");
                for v in &got {
                    lru.remove(*v);
                    model.retain(|k| k != v);
                }
                lru.admit(m, bytes);
                model.retain(|&k| k != m);
                model.push(m);
                assert!(lru.used() <= budget, "seed {seed}");
                assert_eq!(lru.used(), model.iter().map(|&k| sizes[k]).sum::<usize>());
                assert!(lru.is_resident(m));
            }
        }
    }

    #[test]
    fn uses_off_the_budgeted_device_cost_nothing_and_bad_members_are_errors() {
        let mut set = OffloadSet::new(DeviceType::Gpu, 100);
        for _ in 0..3 {
            set.push(MirroredTensor::new(ctensor_base::DataType::Double, &[10]).unwrap())
                .unwrap();
        }
        for i in 0..3 {
            set.write_only(i, DeviceType::Cpu)
                .unwrap()
                .fill(i as f64)
                .unwrap();
            assert_eq!(
                set.read(i, DeviceType::Cpu)
                    .unwrap()
                    .to_vec::<f64>()
                    .unwrap()[0],
                i as f64
            );
        }
        assert_eq!((set.resident_bytes(), set.evictions()), (0, 0));
        assert!(matches!(
            set.read(3, DeviceType::Cpu),
            Err(Error::OutOfRange { .. })
        ));
        assert!(set.get(7).is_err());
        assert_eq!(set.len(), 3);
        // A member larger than the whole budget is refused before anything is evicted.
        let big = MirroredTensor::new(ctensor_base::DataType::Double, &[13]).unwrap();
        let i = set.push(big).unwrap();
        assert!(matches!(
            set.write_only(i, DeviceType::Gpu),
            Err(Error::InvalidArgument { .. })
        ));
        // A use that fails (no GPU here) is not recorded as resident.
        if !ctensor_base::gpu::gpu_available() {
            assert!(set.read(0, DeviceType::Gpu).is_err());
            assert_eq!(set.resident_bytes(), 0);
        }
    }

    #[test]
    fn zero_size_members_with_huge_dimensions_take_no_budget() {
        let mut set = OffloadSet::new(DeviceType::Cpu, 0);
        for dims in [[0usize, 1 << 40], [1 << 40, 0]] {
            let m = MirroredTensor::new(ctensor_base::DataType::ComplexDouble, &dims).unwrap();
            assert_eq!(m.bytes(), 0);
            let i = set.push(m).unwrap();
            assert_eq!(set.write_only(i, DeviceType::Cpu).unwrap().dims(), dims);
            assert_eq!(set.read(i, DeviceType::Cpu).unwrap().numel(), 0);
        }
        assert_eq!((set.resident_bytes(), set.evictions()), (0, 0));
        // A shape whose bytes overflow is refused when the mirror is made.
        assert!(matches!(
            MirroredTensor::new(ctensor_base::DataType::ComplexDouble, &[1 << 61]),
            Err(Error::Overflow { .. })
        ));
    }

    /// Evicting a copy that holds the only current values needs the other device;
    /// without it the use fails with that error and nothing changes.
    #[test]
    fn a_failed_eviction_is_an_error_that_changes_nothing() {
        if ctensor_base::gpu::gpu_available() {
            return; // the eviction then succeeds; the GPU test covers that
        }
        let mut set = OffloadSet::new(DeviceType::Cpu, 80);
        for v in [1.0, 2.0] {
            let i = set
                .push(MirroredTensor::new(ctensor_base::DataType::Double, &[10]).unwrap())
                .unwrap();
            if v == 1.0 {
                set.write_only(i, DeviceType::Cpu).unwrap().fill(v).unwrap();
            }
        }
        assert_eq!(set.resident_bytes(), 80);
        // Member 1 needs member 0's room; member 0's host copy is its only current one.
        assert!(matches!(
            set.write_only(1, DeviceType::Cpu),
            Err(Error::DeviceUnavailable { .. })
        ));
        assert_eq!((set.resident_bytes(), set.evictions()), (80, 0));
        assert!(set.get(0).unwrap().is_current(DeviceType::Cpu));
        assert!(!set.get(1).unwrap().has_copy(DeviceType::Cpu));
        assert_eq!(
            set.read(0, DeviceType::Cpu)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
            vec![1.0; 10]
        );
    }
}
